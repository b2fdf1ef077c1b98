package main

// Parse tree → the AST of tlop.frontend.ast, written as a pickle (pickle.go).
//
// What it does: the same construction as tlop.frontend.parse._Builder, one function per
// labelled alternative, with the same spans (the AST span of a parenthesised expression is that
// of the expression inside; a chain's Binary spans its operands).
//
// What it does not do: report anything.  Whenever the Python builder would report a diagnostic
// (a bad channel attribute, 'over' without 'mapping', a per-process field not [P], a send's word
// other than 'weight', a chain longer than the limit) or the tree is deeper than the limit, it
// stops with a fallback code and Python parses the source again with the reference parser,
// which reports it.

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"
	tp "tlopgrammar/_antlr_go"
)

// span: 1-based first line and column, last line and (inclusive) last column
type span struct{ l, c, el, ec int }

func (s span) to(o span) span { return span{s.l, s.c, o.el, o.ec} }

// fallback codes (the first byte of the answer; 0 is a pickled module)
const (
	fbSyntax  = 1 // a syntax error: the reference parser reports it
	fbBuilder = 2 // the builder would report something
	fbDeep    = 3 // nested deeper than the native path handles
	fbChain   = 4 // a chain longer than the limit: the reference raises its error
	fbPanic   = 5 // the runtime failed: the reference decides
)

type stopped struct{ code byte }

type encoder struct {
	p        *pickler
	maxChain int
	maxDepth int
	depth    int
}

func (e *encoder) fail(code byte) { panic(stopped{code}) }

func textLen(t antlr.Token) int {
	n := utf8.RuneCountInString(t.GetText())
	if n < 1 {
		return 1
	}
	return n
}

func ctxSpan(ctx antlr.ParserRuleContext) span {
	start, stop := ctx.GetStart(), ctx.GetStop()
	if stop == nil || stop.GetTokenIndex() < start.GetTokenIndex() {
		stop = start
	}
	return span{start.GetLine(), start.GetColumn() + 1, stop.GetLine(), stop.GetColumn() + textLen(stop)}
}

func tokSpan(t antlr.Token) span {
	return span{t.GetLine(), t.GetColumn() + 1, t.GetLine(), t.GetColumn() + textLen(t)}
}

// pySpace: Python's str.isspace (Go's unicode.IsSpace without U+001C..U+001F)
func pySpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029,
		0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// unquote: the text of a string literal as parse._unquote: \\ and \" are escapes, any other
// backslash is kept
func unquote(s string) string {
	s = s[1 : len(s)-1]
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '"') {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// splitNumber: parse._split_number (the unit is the trailing letters, µ included)
func splitNumber(text string) (float64, string) {
	i := len(text)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		if !((r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r == 'µ') {
			break
		}
		i -= size
	}
	v, err := strconv.ParseFloat(text[:i], 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			panic(stopped{fbBuilder})
		}
	}
	return v, text[i:]
}

func (e *encoder) enter() {
	e.depth++
	if e.depth > e.maxDepth {
		e.fail(fbDeep)
	}
}

// ------------------------------------------------------------------------------- declarations

func (e *encoder) docs(toks []antlr.Token) {
	p := e.p
	if len(toks) == 0 {
		p.emptyTuple()
		return
	}
	p.mark()
	for _, t := range toks {
		p.str(strings.TrimFunc(t.GetText()[3:], pySpace))
	}
	p.tuple()
}

func (e *encoder) optTypeRef(ctx tp.ITypeRefContext) {
	if ctx == nil {
		e.p.none()
	} else {
		e.typeRef(ctx.(*tp.TypeRefContext))
	}
}

func (e *encoder) optExpr(ctx tp.IExprContext) {
	if ctx == nil {
		e.p.none()
	} else {
		e.expr(ctx)
	}
}

func (e *encoder) params(ctx tp.IParamListContext) {
	p := e.p
	if ctx == nil {
		p.emptyTuple()
		return
	}
	p.mark()
	for _, prm := range ctx.AllParam() {
		e.param(prm.(*tp.ParamContext))
	}
	p.tuple()
}

func (e *encoder) channelParam(ctx tp.IChannelParamContext) {
	p := e.p
	if ctx == nil {
		p.none()
		return
	}
	c := ctx.(*tp.ChannelParamContext)
	p.begin("A", "Param")
	p.key("name")
	p.str(c.GetName().GetText())
	p.key("type")
	e.typeRef(c.GetType_().(*tp.TypeRefContext))
	p.key("op")
	p.none()
	p.key("bound")
	p.none()
	p.key("default")
	p.none()
	p.key("span")
	p.span(ctxSpan(c))
	p.key("constraint_span")
	p.none()
	p.key("per_rank")
	p.none()
	p.key("per_rank_span")
	p.none()
	p.end()
}

var channelPlacements = map[string]string{"within": "node", "between": "nodes"}
var contentionKeys = map[string]bool{"node": true, "dst_node": true, "src_node": true, "either": true, "all": true}

func (e *encoder) decl(d *tp.DeclContext) {
	p := e.p
	docs := d.GetDocs()
	switch b := d.GetBody().(type) {
	case *tp.ModelDeclContext:
		p.begin("A", "ModelDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("docs")
		e.docs(docs)
		p.key("span")
		p.span(ctxSpan(b))
	case *tp.ImportDeclContext:
		p.begin("A", "ImportDecl")
		p.key("path")
		p.str(unquote(b.GetPath().GetText()))
		p.key("docs")
		e.docs(docs)
		p.key("span")
		p.span(ctxSpan(b))
	case *tp.ChannelDeclContext:
		words := b.GetAttrs()
		placement, contention := "", ""
		for i := 0; i < len(words); {
			w := words[i].GetText()
			nxt := ""
			if i+1 < len(words) {
				nxt = words[i+1].GetText()
			}
			if want, ok := channelPlacements[w]; ok && placement == "" {
				if i+1 >= len(words) || nxt != want {
					e.fail(fbBuilder)
				}
				placement = w
			} else if w == "contention" && contention == "" {
				if i+1 >= len(words) || !contentionKeys[nxt] {
					e.fail(fbBuilder)
				}
				contention = nxt
			} else {
				e.fail(fbBuilder)
			}
			i += 2
		}
		p.begin("A", "ChannelDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("docs")
		e.docs(docs)
		p.key("placement")
		e.optStr(placement)
		p.key("contention")
		e.optStr(contention)
		p.key("span")
		p.span(ctxSpan(b))
	case *tp.TableDeclContext:
		p.begin("A", "TableDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("channel")
		e.channelParam(b.ChannelParam())
		p.key("params")
		e.params(b.ParamList())
		p.key("result")
		e.typeRef(b.GetResult().(*tp.TypeRefContext))
		p.key("docs")
		e.docs(docs)
		p.key("span")
		p.span(ctxSpan(b))
	case *tp.ParamDeclContext:
		p.begin("A", "ParamDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("channel")
		e.channelParam(b.ChannelParam())
		p.key("type")
		e.typeRef(b.GetType_().(*tp.TypeRefContext))
		p.key("docs")
		e.docs(docs)
		p.key("span")
		p.span(ctxSpan(b))
	case *tp.TransmissionDeclContext:
		p.begin("A", "TransmissionDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("channel")
		p.str(b.GetChannel().GetText())
		p.key("param")
		p.str(b.GetSize().GetText())
		p.key("via")
		if b.GetVia() != nil {
			p.str(b.GetVia().GetText())
		} else {
			p.none()
		}
		p.key("body")
		e.expr(b.GetBody())
		p.key("docs")
		e.docs(docs)
		p.key("span")
		p.span(ctxSpan(b))
		p.key("channel_span")
		p.span(tokSpan(b.GetChannel()))
	case *tp.DefDeclContext:
		p.begin("A", "DefDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("params")
		e.params(b.ParamList())
		p.key("result")
		e.optTypeRef(b.GetResult())
		p.key("body")
		e.expr(b.GetBody())
		p.key("docs")
		e.docs(docs)
		p.key("span")
		p.span(ctxSpan(b))
	case *tp.AlgorithmDeclContext:
		over := ""
		if o, ok := b.GetOver().(*tp.OverClauseContext); ok && o != nil {
			if o.GetKind().GetText() != "mapping" {
				e.fail(fbBuilder)
			}
			over = "mapping"
			if o.GetName() != nil {
				over = o.GetName().GetText()
			}
		}
		p.begin("A", "AlgorithmDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("params")
		e.params(b.ParamList())
		p.key("result")
		e.optTypeRef(b.GetResult())
		p.key("body")
		e.expr(b.GetBody())
		p.key("docs")
		e.docs(docs)
		p.key("over")
		e.optStr(over)
		p.key("span")
		p.span(ctxSpan(b))
		p.key("requires")
		e.optExpr(b.GetRequires())
	case *tp.ConfigDeclContext:
		p.begin("A", "ConfigDecl")
		p.key("name")
		p.str(b.GetName().GetText())
		p.key("fields")
		fields := b.GetFields()
		if len(fields) == 0 {
			p.emptyTuple()
		} else {
			p.mark()
			for _, fi := range fields {
				f := fi.(*tp.ConfigFieldContext)
				if f.GetRanks() != nil && f.GetRanks().GetText() != "P" {
					e.fail(fbBuilder)
				}
				p.begin("A", "ConfigField")
				p.key("name")
				p.str(f.GetName().GetText())
				p.key("type")
				e.typeRef(f.GetType_().(*tp.TypeRefContext))
				p.key("per_rank")
				p.bool(f.GetPerRank() != nil)
				p.key("span")
				p.span(ctxSpan(f))
				p.end()
			}
			p.tuple()
		}
		p.key("docs")
		e.docs(docs)
		p.key("span")
		p.span(ctxSpan(b))
	default:
		e.fail(fbSyntax)
	}
	p.end()
}

func (e *encoder) optStr(s string) {
	if s == "" {
		e.p.none()
	} else {
		e.p.str(s)
	}
}

func (e *encoder) param(ctx *tp.ParamContext) {
	p := e.p
	p.begin("A", "Param")
	p.key("name")
	p.str(ctx.GetName().GetText())
	p.key("type")
	e.typeRef(ctx.GetType_().(*tp.TypeRefContext))
	p.key("op")
	if ctx.GetOp() != nil {
		p.str(ctx.GetOp().GetText())
	} else {
		p.none()
	}
	p.key("bound")
	if ctx.GetBound() != nil {
		e.expr(ctx.GetBound())
	} else {
		p.none()
	}
	p.key("default")
	e.optExpr(ctx.GetDefault_())
	p.key("span")
	p.span(ctxSpan(ctx))
	p.key("constraint_span")
	if ctx.GetOp() != nil {
		p.span(ctxSpan(ctx.GetOp()).to(ctxSpan(ctx.GetBound())))
	} else {
		p.none()
	}
	p.key("per_rank") // `counts: bytes[P]`
	if ctx.GetPerRank() != nil {
		p.str(ctx.GetRanks().GetText())
	} else {
		p.none()
	}
	p.key("per_rank_span")
	if ctx.GetPerRank() != nil {
		p.span(tokSpan(ctx.GetRanks()))
	} else {
		p.none()
	}
	p.end()
}

func typeFactor(f *tp.TypeFactorContext) string {
	text := f.GetName().GetText()
	if f.GetExponent() != nil {
		text += "^"
		if f.GetNeg() != nil {
			text += "-"
		}
		text += f.GetExponent().GetText()
	}
	return text
}

func (e *encoder) typeRef(ctx *tp.TypeRefContext) {
	factors, ops := ctx.GetFactors(), ctx.GetOps()
	text := typeFactor(factors[0].(*tp.TypeFactorContext))
	for i, op := range ops {
		text += op.GetText() + typeFactor(factors[i+1].(*tp.TypeFactorContext))
	}
	p := e.p
	p.begin("A", "TypeRef")
	p.key("name")
	p.str(text)
	p.key("span")
	p.span(ctxSpan(ctx))
	p.end()
}

// ------------------------------------------------------------------------------- expressions

// expr writes the AST of any expression rule's context and returns the AST node's span.
func (e *encoder) expr(t antlr.Tree) span {
	e.enter()
	s := e.expr1(t)
	e.depth-- // (a failure unwinds everything: no defer needed)
	return s
}

func (e *encoder) expr1(t antlr.Tree) span {
	p := e.p
	switch c := t.(type) {
	case *tp.LetExprContext:
		s := ctxSpan(c)
		p.begin("A", "LetIn")
		p.key("name")
		p.str(c.GetName().GetText())
		p.key("value")
		e.expr(c.GetValue())
		p.key("body")
		e.expr(c.GetBody())
		p.key("span")
		p.span(s)
		p.key("name_span")
		p.span(tokSpan(c.GetName()))
		p.end()
		return s
	case *tp.IfExprContext:
		s := ctxSpan(c)
		p.begin("A", "IfThen")
		p.key("test")
		e.expr(c.GetTest())
		p.key("then")
		e.expr(c.GetThen())
		p.key("otherwise")
		e.expr(c.GetOtherwise())
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.ReduceExprContext:
		s := ctxSpan(c)
		p.begin("A", "Reduction")
		p.key("kind")
		p.str(c.GetKind().GetText())
		p.key("var")
		p.str(c.GetVar_().GetText())
		p.key("lo")
		e.expr(c.GetLo())
		p.key("hi")
		e.expr(c.GetHi())
		p.key("body")
		e.expr(c.GetBody())
		p.key("span")
		p.span(s)
		p.key("var_span")
		p.span(tokSpan(c.GetVar_()))
		p.end()
		return s
	case *tp.PlainExprContext:
		return e.expr(c.OrExpr())
	case *tp.OrExprContext, *tp.AndExprContext, *tp.BitXorContext, *tp.BitAndContext, *tp.ShiftContext,
		*tp.AdditiveContext, *tp.ConcurrentContext, *tp.MultiplicativeContext:
		return e.chain(c.(antlr.ParserRuleContext))
	case *tp.NotOpContext:
		s := ctxSpan(c)
		p.begin("A", "Unary")
		p.key("op")
		p.str("not")
		p.key("operand")
		e.expr(c.NotExpr())
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.NotPassContext:
		return e.expr(c.Comparison())
	case *tp.ComparisonContext:
		parts := c.AllBitXor()
		if len(parts) == 1 {
			return e.expr(parts[0])
		}
		op := c.CompareOp()
		p.begin("A", "Binary")
		p.key("op")
		p.str(op.GetText())
		p.key("lhs")
		ls := e.expr(parts[0])
		p.key("rhs")
		rs := e.expr(parts[1])
		p.key("span")
		p.span(ls.to(rs))
		p.key("op_span")
		p.span(ctxSpan(op))
		p.end()
		return ls.to(rs)
	case *tp.NegateContext:
		s := ctxSpan(c)
		p.begin("A", "Unary")
		p.key("op")
		p.str("-")
		p.key("operand")
		e.expr(c.Unary())
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.UnaryPassContext:
		return e.expr(c.Power())
	case *tp.PowerContext:
		if c.GetExponent() == nil {
			return e.expr(c.GetBase())
		}
		var caret antlr.Token
		for _, ch := range c.GetChildren() {
			if tn, ok := ch.(antlr.TerminalNode); ok && tn.GetSymbol().GetText() == "^" {
				caret = tn.GetSymbol()
				break
			}
		}
		p.begin("A", "Binary")
		p.key("op")
		p.str("^")
		p.key("lhs")
		ls := e.expr(c.GetBase())
		p.key("rhs")
		rs := e.expr(c.GetExponent())
		p.key("span")
		p.span(ls.to(rs))
		p.key("op_span")
		p.span(tokSpan(caret))
		p.end()
		return ls.to(rs)
	case *tp.CallContext:
		s := ctxSpan(c)
		p.begin("A", "Call")
		p.key("callee")
		p.str(c.GetCallee().GetText())
		p.key("channel")
		e.optExpr(c.GetChannel())
		p.key("args")
		if c.GetArgs() == nil {
			p.emptyTuple()
		} else {
			p.mark()
			for _, ai := range c.GetArgs().AllArg() {
				a := ai.(*tp.ArgContext)
				p.begin("A", "Arg")
				p.key("name")
				if a.GetName() != nil {
					p.str(a.GetName().GetText())
				} else {
					p.none()
				}
				p.key("value")
				e.expr(a.GetValue())
				p.key("span")
				p.span(ctxSpan(a))
				p.end()
			}
			p.tuple()
		}
		p.key("span")
		p.span(s)
		p.key("callee_span")
		p.span(ctxSpan(c.GetCallee()))
		p.end()
		return s
	case *tp.IndexedNameContext:
		s := ctxSpan(c)
		p.begin("A", "Indexed")
		p.key("id")
		p.str(c.GetName().GetText())
		p.key("channel")
		e.expr(c.GetChannel())
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.ConfigAccessContext:
		s := ctxSpan(c)
		p.begin("A", "ConfigAccess")
		p.key("config")
		p.str(c.GetConfig().GetText())
		p.key("field")
		p.str(c.GetField().GetText())
		p.key("index")
		e.optExpr(c.GetIndex())
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.AtomPassContext:
		return e.expr(c.Atom())
	case *tp.NumberContext:
		s := ctxSpan(c)
		v, unit := splitNumber(c.GetText())
		p.begin("A", "Number")
		p.key("value")
		p.float(v)
		p.key("unit")
		p.str(unit)
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.NameContext:
		s := ctxSpan(c)
		p.begin("A", "Name")
		p.key("id")
		p.str(c.GetText())
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.ParenContext:
		return e.expr(c.GetInner())
	case *tp.StageAtomContext:
		s := ctxSpan(c)
		p.begin("A", "Stage")
		p.key("items")
		e.items(c.GetItems())
		p.key("span")
		p.span(s)
		p.end()
		return s
	case *tp.StagesAtomContext:
		s := ctxSpan(c)
		p.begin("A", "Stages")
		p.key("var")
		p.str(c.GetVar_().GetText())
		p.key("lo")
		e.expr(c.GetLo())
		p.key("hi")
		e.expr(c.GetHi())
		p.key("items")
		e.items(c.GetItems())
		p.key("span")
		p.span(s)
		p.key("var_span")
		p.span(tokSpan(c.GetVar_()))
		p.end()
		return s
	}
	e.fail(fbSyntax)
	return span{}
}

// chain: a left-associative chain, parts[0] op parts[1] … (the rule's rule children are
// the operands, its token children the operators), as parse._Builder._chain
func (e *encoder) chain(ctx antlr.ParserRuleContext) span {
	children := ctx.GetChildren()
	if len(children) == 1 { // one operand: most levels of the precedence ladder
		return e.expr(children[0])
	}
	var parts []antlr.Tree
	var ops []antlr.Token
	for _, ch := range children {
		if tn, ok := ch.(antlr.TerminalNode); ok {
			ops = append(ops, tn.GetSymbol())
		} else {
			parts = append(parts, ch)
		}
	}
	if len(ops) >= e.maxChain {
		e.fail(fbChain)
	}
	if len(parts) != len(ops)+1 {
		e.fail(fbSyntax)
	}
	return e.chainUpTo(parts, ops, len(ops))
}

func (e *encoder) chainUpTo(parts []antlr.Tree, ops []antlr.Token, k int) span {
	if k == 0 {
		return e.expr(parts[0])
	}
	p := e.p
	p.begin("A", "Binary")
	p.key("op")
	p.str(ops[k-1].GetText())
	p.key("lhs")
	ls := e.chainUpTo(parts, ops, k-1)
	p.key("rhs")
	rs := e.expr(parts[k])
	p.key("span")
	p.span(ls.to(rs))
	p.key("op_span")
	p.span(tokSpan(ops[k-1]))
	p.end()
	return ls.to(rs)
}

// ------------------------------------------------------------------------------- schedules

func (e *encoder) items(items []tp.IItemContext) {
	p := e.p
	if len(items) == 0 {
		p.emptyTuple()
		return
	}
	p.mark()
	for _, it := range items {
		e.item(it)
	}
	p.tuple()
}

func (e *encoder) loop(kind string, v antlr.Token, lo, hi, cond tp.IExprContext, body tp.IItemContext, s span) {
	p := e.p
	p.begin("A", "LoopItem")
	p.key("kind")
	p.str(kind)
	p.key("var")
	p.str(v.GetText())
	p.key("lo")
	e.expr(lo)
	p.key("hi")
	e.expr(hi)
	p.key("where")
	e.optExpr(cond)
	p.key("body")
	e.item(body)
	p.key("span")
	p.span(s)
	p.key("var_span")
	p.span(tokSpan(v))
	p.end()
}

func (e *encoder) item(t tp.IItemContext) {
	e.enter()
	e.item1(t)
	e.depth--
}

func (e *encoder) item1(t tp.IItemContext) {
	p := e.p
	switch c := t.(type) {
	case *tp.ParItemContext:
		e.loop("par", c.GetVar_(), c.GetLo(), c.GetHi(), c.GetCond(), c.GetBody(), ctxSpan(c))
	case *tp.SeqItemContext:
		e.loop("seq", c.GetVar_(), c.GetLo(), c.GetHi(), c.GetCond(), c.GetBody(), ctxSpan(c))
	case *tp.SendItemContext:
		if c.GetKw() != nil && c.GetKw().GetText() != "weight" {
			e.fail(fbBuilder)
		}
		p.begin("A", "SendItem")
		p.key("src")
		e.expr(c.GetSrc())
		p.key("dst")
		e.expr(c.GetDst())
		p.key("size")
		e.expr(c.GetSize())
		p.key("weight")
		if c.GetKw() != nil {
			e.expr(c.GetWeight())
		} else {
			p.none()
		}
		p.key("span")
		p.span(ctxSpan(c))
		p.end()
	case *tp.ComputeItemContext:
		p.begin("A", "ComputeItem")
		p.key("kind")
		p.str("compute")
		p.key("rank")
		e.expr(c.GetRank())
		p.key("amount")
		e.expr(c.GetCost())
		p.key("span")
		p.span(ctxSpan(c))
		p.end()
	case *tp.ReduceItemContext:
		p.begin("A", "ComputeItem")
		p.key("kind")
		p.str("reduce")
		p.key("rank")
		e.expr(c.GetRank())
		p.key("amount")
		e.expr(c.GetSize())
		p.key("span")
		p.span(ctxSpan(c))
		p.end()
	case *tp.BlockItemContext:
		p.begin("A", "BlockItem")
		p.key("items")
		e.items(c.GetItems())
		p.key("span")
		p.span(ctxSpan(c))
		p.end()
	default:
		e.fail(fbSyntax)
	}
}
