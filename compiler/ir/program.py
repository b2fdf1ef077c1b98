"""The IR's declarations: a program's channels, tables, scalars, transmissions and algorithms.

What it does: the frozen, hashable declaration classes an engine receives with the cost IR —
:class:`TableSig`, :class:`ScalarSig`, :class:`TransmissionVariant`, :class:`ParamSig`,
:class:`Algorithm`, :class:`ChannelInfo` and :class:`Program` (everything an engine needs to
price one module's algorithms) — with the meaning :mod:`tlop.ir.nodes` describes.

What it does not do: define expression nodes (:mod:`tlop.ir.nodes`, which imports this module
last and re-exports its names: import them from :mod:`tlop.ir`), or lower, check or evaluate
anything.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Optional

from tlop.ir.frozen import _frozen, _span_field, _type_field

#: an expression of the cost IR (:class:`tlop.ir.nodes.Expr`; not imported: nodes imports this module)
Expr = Any

__all__ = ["TableSig", "ScalarSig", "TransmissionVariant", "ParamSig", "Algorithm", "ChannelInfo", "Program"]


@_frozen
class TableSig:
    """A profile table the program reads: ``table L[c: channel](m: bytes, tau: int) -> time``.

    ``tau_index`` is the position of the concurrency argument (the parameter named ``tau``),
    or ``None`` for overhead-like tables that concurrency never scales."""
    name: str
    channel_indexed: bool
    params: tuple  # parameter names
    tau_index: Optional[int]
    model: str = ""
    span: Any = _span_field()
    #: the result type and the parameter types (:class:`~tlop.ir.types.Type`), set by lowering
    ty: Any = _type_field()
    param_tys: Any = _type_field()

    def profile_key(self, profile, channel) -> str:
        """The name to read from a profile: ``model.name`` when the profile has a table of that
        qualified name (profiles of several models can hold e.g. ``loggp.L`` and ``plogp.L``),
        otherwise the bare name."""
        qualified = f"{self.model}.{self.name}"
        return qualified if self.model and profile.has_table(qualified, channel) else self.name


@_frozen
class ScalarSig:
    """A scalar profile parameter: ``param L: time`` or ``param alpha[c: channel]: time``."""
    name: str
    channel_indexed: bool
    model: str = ""
    span: Any = _span_field()
    #: the parameter's type (:class:`~tlop.ir.types.Type`), set by lowering
    ty: Any = _type_field()

    def profile_key(self, profile, channel) -> str:
        """``model.name`` when the profile has a scalar of that qualified name, else the name."""
        qualified = f"{self.model}.{self.name}"
        return qualified if self.model and profile.has_scalar(qualified, channel) else self.name


@_frozen
class TransmissionVariant:
    """One decomposition of a transmission on one channel: ``transmission T[net](m) via tcp = …``.
    ``via`` is ``None`` for the default decomposition."""
    name: str
    channel: int
    via: Optional[str]
    param: str
    body: Expr
    span: Any = _span_field()


@_frozen
class ParamSig:
    """An algorithm parameter: name, type name, optional default and constraint.

    ``type`` is the type's spelling (``int``, ``bytes``, ``time/bytes`` …; parse it with
    :func:`tlop.ir.types.parse_type`).  ``constraint`` is a tuple ``(op, Expr)`` such as
    ``(">=", Num(1))`` or ``None``; the default and the bound are closed expressions (constants
    after lowering).  Parameters with a dimension (sizes, times, rates) without a declared
    constraint get the implicit ``>= 0`` (with no ``constraint_span``).  ``per_rank`` is the
    name of the process-count parameter of a per-rank parameter (``counts: bytes[P]``: one value
    per process, each of type ``type`` and checked against the constraint one by one), None for a
    plain one."""
    name: str
    type: str
    default: Optional[Expr] = None
    constraint: Optional[tuple] = None
    span: Any = _span_field()
    constraint_span: Any = _span_field()
    per_rank: Optional[str] = None


@_frozen
class Algorithm:
    """A priced algorithm: its parameters and its cost expression (seconds)."""
    name: str
    params: tuple  # tuple[ParamSig, ...]
    body: Expr
    doc: str = ""
    model: str = ""
    span: Any = _span_field()
    #: the name of the process mapping (``over map: mapping``), None when the algorithm has none
    over: Optional[str] = None
    #: the condition of ``where COND`` (bool, over the parameters) every call must satisfy, and
    #: the span of COND; None without one
    requires: Optional[Expr] = None
    requires_span: Any = _span_field()


@_frozen
class ChannelInfo:
    """What the platform declares about a channel for schedules: ``placement`` is ``"within"``
    (the channel of transfers whose ends share a node), ``"between"`` (transfers between
    nodes) or None; ``contention`` is the key of the transfers that share it and raise each
    other's τ: ``node`` (every transfer inside one node), ``dst_node`` (entering one node),
    ``src_node`` (leaving one node), ``either`` (a transfer counts in the group of its source
    node and in the group of its destination node) or ``all`` (one group per channel)."""
    placement: Optional[str] = None
    contention: Optional[str] = None


@_frozen
class Program:
    """Everything an engine needs to price the algorithms of one module (with its imports)."""
    channels: tuple  # channel names; a channel value is an index into this tuple
    tables: dict  # name -> TableSig
    scalars: dict  # name -> ScalarSig
    transmissions: dict  # name -> tuple[TransmissionVariant, ...]
    algorithms: dict  # name -> Algorithm
    model: str = ""
    #: channel name -> :class:`ChannelInfo` (channels declared with a placement or contention)
    channel_info: dict = field(default_factory=dict)

    def channel_index(self, name: str) -> int:
        return self.channels.index(name)

    def variants(self, name: str, channel: int) -> tuple:
        """The decompositions of transmission ``name`` on channel index ``channel``."""
        return tuple(v for v in self.transmissions.get(name, ()) if v.channel == channel)

    def variant_for(self, name: str, channel: int, kind: str):
        """The decomposition that applies on a profile channel of transmission ``kind``: the one
        declared ``via kind``, else the default (no ``via``); None when there is neither."""
        variants = self.variants(name, channel)
        return next((v for v in variants if v.via == kind), None) or \
            next((v for v in variants if v.via is None), None)
