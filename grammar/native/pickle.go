package main

// A writer of Python pickle opcodes (protocol 4), enough to build the AST's frozen dataclasses
// without running their __init__: each node is NEWOBJ (cls.__new__(cls)) then BUILD with its
// field dict, which CPython's C unpickler applies to the instance's __dict__ directly.
//
// Classes are written as STACK_GLOBAL of a short module tag ("A": tlop.frontend.ast, "D":
// tlop.runtime.diagnostics) and a class name; tlop.frontend.native's readers map the tag and
// refuse anything else.  A Span is REDUCE of the global "D.span" with its four numbers (first
// line and column, last line and column): the readers make it a Span of the Source being
// parsed, which the pickle does not name.  Strings (field names, identifiers, operators) are
// memoised: each distinct string is one Python object.

import (
	"encoding/binary"
	"math"
)

const (
	opMark        = '('
	opStop        = '.'
	opNone        = 'N'
	opTrue        = 0x88
	opFalse       = 0x89
	opBinInt      = 'J'
	opBinInt1     = 'K'
	opBinInt2     = 'M'
	opBinFloat    = 'G'
	opShortUni    = 0x8c
	opBinUni      = 'X'
	opEmptyTuple  = ')'
	opTuple       = 't'
	opEmptyDict   = '}'
	opSetItems    = 'u'
	opMemoize     = 0x94
	opBinGet      = 'h'
	opLongBinGet  = 'j'
	opStackGlobal = 0x93
	opNewObj      = 0x81
	opBuild       = 'b'
	opReduce      = 'R'
	opPop         = '0'
	opProto       = 0x80
)

type pickler struct {
	b       []byte
	memo    int
	strs    map[string]int
	classes map[string]int // tag + name -> memo index (names are unique across tags)
	spanFn  int            // memo index of D.span, once written (0: not yet; stored + 1)
}

func newPickler(sizeHint int) *pickler {
	p := &pickler{b: make([]byte, 0, sizeHint), strs: map[string]int{}, classes: map[string]int{}}
	p.b = append(p.b, opProto, 4)
	return p
}

func (p *pickler) memoize() int {
	p.b = append(p.b, opMemoize)
	p.memo++
	return p.memo - 1
}

func (p *pickler) get(i int) {
	if i < 256 {
		p.b = append(p.b, opBinGet, byte(i))
	} else {
		p.b = append(p.b, opLongBinGet)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(i))
	}
}

func (p *pickler) rawStr(s string) {
	if len(s) < 256 {
		p.b = append(p.b, opShortUni, byte(len(s)))
	} else {
		p.b = append(p.b, opBinUni)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(s)))
	}
	p.b = append(p.b, s...)
}

// str writes a string, once: later occurrences refer to the first.
func (p *pickler) str(s string) {
	if i, ok := p.strs[s]; ok {
		p.get(i)
		return
	}
	p.rawStr(s)
	p.strs[s] = p.memoize()
}

func (p *pickler) int(i int) {
	switch {
	case i >= 0 && i < 256:
		p.b = append(p.b, opBinInt1, byte(i))
	case i >= 0 && i < 65536:
		p.b = append(p.b, opBinInt2)
		p.b = binary.LittleEndian.AppendUint16(p.b, uint16(i))
	default:
		p.b = append(p.b, opBinInt)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(int32(i)))
	}
}

func (p *pickler) float(f float64) {
	p.b = append(p.b, opBinFloat)
	p.b = binary.BigEndian.AppendUint64(p.b, math.Float64bits(f))
}

func (p *pickler) none() { p.b = append(p.b, opNone) }

func (p *pickler) bool(v bool) {
	if v {
		p.b = append(p.b, opTrue)
	} else {
		p.b = append(p.b, opFalse)
	}
}

func (p *pickler) mark() { p.b = append(p.b, opMark) }

// tuple closes a tuple of the items written since the matching mark(); emptyTuple has no mark.
func (p *pickler) tuple()      { p.b = append(p.b, opTuple) }
func (p *pickler) emptyTuple() { p.b = append(p.b, opEmptyTuple) }

// class pushes a class (tag "A" or "D" and its name), memoised.
func (p *pickler) class(tag, name string) {
	key := name // the AST's class names and D's (Span, span) do not collide
	if i, ok := p.classes[key]; ok {
		p.get(i)
		return
	}
	p.str(tag)
	p.str(name)
	p.b = append(p.b, opStackGlobal)
	p.classes[key] = p.memoize()
}

// begin starts an instance of a class of the AST; its fields follow as key(...) value pairs,
// then end().
func (p *pickler) begin(tag, name string) {
	p.class(tag, name)
	p.b = append(p.b, opEmptyTuple, opNewObj, opEmptyDict, opMark)
}

func (p *pickler) key(k string) { p.str(k) }

func (p *pickler) end() { p.b = append(p.b, opSetItems, opBuild) }

func (p *pickler) stop() { p.b = append(p.b, opStop) }

// span writes a Span (the region of a source, 1-based, end column inclusive): D.span(l, c, el, ec).
func (p *pickler) span(s span) {
	if p.spanFn > 0 { // the most frequent global: no map lookup
		p.get(p.spanFn - 1)
	} else {
		p.class("D", "span")
		p.spanFn = p.classes["span"] + 1
	}
	p.mark()
	p.int(s.l)
	p.int(s.c)
	p.int(s.el)
	p.int(s.ec)
	p.b = append(p.b, opTuple, opReduce)
}
