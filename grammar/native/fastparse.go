package main

// The fast path: a hand-written recursive-descent parser of grammar/Tlop.g4 that writes the same
// pickle as the ANTLR path (main.go parse + encode.go), byte for byte, without ANTLR.
//
// What it does: reads the tokens of fastlex.go one declaration at a time, parses the
// declaration into a small array of nodes (no parse tree: one node per AST node, each with the
// range of tokens its grammar rule spans) and writes it through the pickler in exactly the order
// encode.go does, so the strings and classes are memoised in the same order.  The decisions are
// the ones ANTLR makes on a valid source (the grammar is unambiguous on them): `max`/`min` then
// an ID is a reduction, else a call; `ID [ e ]` then `(` is a call with a channel, else an
// indexed name; `ID .` a config access; `ID =` in a call's arguments a named argument; let, if
// and reductions extend as far right as they can; `^` is right associative with a unary
// exponent; one comparison at most, unchained.  Spans are computed as encode.go computes them
// (a rule's first to last token; a parenthesised expression is its inner expression; a
// Binary spans its operands).  It keeps the ANTLR path's limits exactly: the token pre-scan
// (nestingEstimate), the depth of the encoder's recursion (one level per rule context, as
// encode.go counts them) and the chain limit.
//
// What it does not do: report or recover from anything.  On any syntax error, any ERROR_CHAR,
// anything encode.go would answer with a fallback code (a bad channel attribute, `over` without
// `mapping`, a per-process field not [P], a send's word other than `weight`, a number the
// builder refuses, a chain, depth or pre-scan over its limit), or any failure at all, it answers
// "delegate" and main.go runs the ANTLR path unchanged, which answers that source as before.

import (
	"strings"
	"unicode/utf8"
)

// errDelegate: the fast path leaves the source to the ANTLR path
type errDelegate struct{}

// node kinds (one per AST class; a parenthesised expression is its inner node)
const (
	nLet uint8 = iota
	nIf
	nReduce
	nBinary
	nUnary
	nCall
	nArg
	nIndexed
	nConfigAccess
	nNumber
	nName
	nStage
	nStages
	nLoop
	nSend
	nCompute
	nBlock
	nParam
	nTypeRef
	nField
)

// node: tok, tok2 are token indices (-1: none), a..d child nodes (-1: none), list the first
// node of a list (arguments, items, parameters, fields) linked by next, first..last the tokens
// of the node's grammar rule (its context span)
type node struct {
	kind        uint8
	tok, tok2   int32
	first, last int32
	a, b, c, d  int32
	list, next  int32
	aux         int32 // a parameter's bound: its last token
}

// fdecl: one declaration (its body rule: first..last tokens; docs: the DOC_COMMENT tokens
// before it)
type fdecl struct {
	kind               uint8 // the keyword's token kind
	first, last        int32
	docs0, docsN       int32
	name               int32 // token
	chanParam          int32 // node
	params             int32 // list head
	result             int32 // node (typeRef)
	body               int32 // node
	channel, size, via int32 // tokens
	overName, overKind int32 // tokens
	requires           int32 // node
	fields             int32 // list head
	attrs0, attrsN     int32 // tokens
}

type fparser struct {
	lx       lexer
	toks     []ftok // the current declaration's tokens and the lookahead
	pos      int
	nodes    []node
	p        *pickler
	maxChain int
	maxDepth int
	// keyMemo[k]: 0 never written, -1 written once, -2 not to be cached, i+1 the pickler's memo i
	keyMemo [nKeys]int32
}

func (f *fparser) fail() { panic(errDelegate{}) }

// fill lexes until the token k ahead is there
func (f *fparser) fill(k int) {
	for f.pos+k >= len(f.toks) {
		if len(f.toks) == cap(f.toks) {
			f.toks = append(f.toks, ftok{})[:len(f.toks)]
		}
		f.toks = f.toks[:len(f.toks)+1]
		f.lx.next(&f.toks[len(f.toks)-1])
	}
}

// at: the token k ahead (lexed on demand)
func (f *fparser) at(k int) *ftok {
	if f.pos+k >= len(f.toks) {
		f.fill(k)
	}
	return &f.toks[f.pos+k]
}

func (f *fparser) cur() uint8 {
	if f.pos < len(f.toks) {
		return f.toks[f.pos].kind
	}
	f.fill(0)
	return f.toks[f.pos].kind
}

func (f *fparser) la(k int) uint8 { return f.at(k).kind }

func (f *fparser) consume() int32 {
	if f.pos >= len(f.toks) {
		f.fill(0)
	}
	f.pos++
	return int32(f.pos - 1)
}

func (f *fparser) expect(k uint8) int32 {
	if f.cur() != k {
		f.fail()
	}
	return f.consume()
}

func (f *fparser) enter(d int) {
	if d > f.maxDepth {
		f.fail()
	}
}

func (f *fparser) newNode(kind uint8, first int32) int32 {
	f.nodes = append(f.nodes, node{kind: kind, tok: -1, tok2: -1, first: first, last: first,
		a: -1, b: -1, c: -1, d: -1, list: -1, next: -1, aux: -1})
	return int32(len(f.nodes) - 1)
}

// done sets a node's last token: the last one consumed
func (f *fparser) done(n int32) int32 {
	f.nodes[n].last = int32(f.pos - 1)
	return n
}

func (f *fparser) text(t int32) string { tk := &f.toks[t]; return f.lx.src[tk.start:tk.end] }

func (f *fparser) tokSpan(t int32) span {
	tk := &f.toks[t]
	return span{int(tk.line), int(tk.col) + 1, int(tk.line), int(tk.col + tk.n)}
}

func (f *fparser) rangeSpan(first, last int32) span {
	a, b := &f.toks[first], &f.toks[last]
	return span{int(a.line), int(a.col) + 1, int(b.line), int(b.col + b.n)}
}

func (f *fparser) ctx(n int32) span { return f.rangeSpan(f.nodes[n].first, f.nodes[n].last) }

// list building: append n after tail (head, tail start at -1)
func (f *fparser) link(head, tail *int32, n int32) {
	if *head < 0 {
		*head = n
	} else {
		f.nodes[*tail].next = n
	}
	*tail = n
}

// ------------------------------------------------------------------------------- field names

// fkey: a field name of the AST (written by f.key)
type fkey uint8

const (
	kyAmount fkey = iota
	kyArgs
	kyBody
	kyBound
	kyCallee
	kyCalleeSpan
	kyChannel
	kyChannelSpan
	kyConfig
	kyConstraintSpan
	kyContention
	kyDecls
	kyDefault
	kyDocs
	kyDst
	kyField
	kyFields
	kyHi
	kyId
	kyIndex
	kyItems
	kyKind
	kyLhs
	kyLo
	kyName
	kyNameSpan
	kyOp
	kyOpSpan
	kyOperand
	kyOtherwise
	kyOver
	kyParam
	kyParams
	kyPath
	kyPerRank
	kyPerRankSpan
	kyPlacement
	kyRank
	kyRequires
	kyResult
	kyRhs
	kySize
	kySpan
	kySrc
	kyTest
	kyThen
	kyType
	kyUnit
	kyValue
	kyVar
	kyVarSpan
	kyVia
	kyWeight
	kyWhere
	nKeys
)

var fkeyNames = [nKeys]string{
	"amount", "args", "body", "bound", "callee", "callee_span", "channel", "channel_span", "config",
	"constraint_span", "contention", "decls", "default", "docs", "dst", "field", "fields", "hi", "id",
	"index", "items", "kind", "lhs", "lo", "name", "name_span", "op", "op_span", "operand",
	"otherwise", "over", "param", "params", "path", "per_rank", "per_rank_span", "placement", "rank",
	"requires", "result", "rhs", "size", "span", "src", "test", "then", "type", "unit", "value",
	"var", "var_span", "via", "weight", "where",
}

// key writes a field name with p.key, as encode.go does.  A field name is a string the pickler
// memoises on first use and refers to after (p.str: a map lookup, then p.get); once the bytes
// p.key writes for a name are seen to be exactly p.get of the pickler's memo of it, f.key
// writes p.get of that memo directly, without the lookup (a third of the lookups of a
// declaration; about 15% of the fast path's time).  Should pickle.go write names otherwise, the check fails and f.key keeps calling
// p.key.
func (f *fparser) key(k fkey) {
	state := f.keyMemo[k]
	if state > 0 {
		f.p.get(int(state - 1))
		return
	}
	name := fkeyNames[k]
	start := len(f.p.b)
	f.p.key(name)
	switch state {
	case 0: // the first time: the name may be new to the pickler
		f.keyMemo[k] = -1
	case -1: // the second time: is it p.get of the memo?
		f.keyMemo[k] = -2
		if i, ok := f.p.strs[name]; ok {
			ref := pickler{}
			ref.get(i)
			if string(ref.b) == string(f.p.b[start:]) {
				f.keyMemo[k] = int32(i) + 1
			}
		}
	}
}

// ------------------------------------------------------------------------------- entry point

// chunkSize: the answer is written in pieces of about this size (a contiguous buffer grown by
// doubling would copy it, and touch twice its size, again and again: a file of 10⁵
// declarations answers 74 MB); answer() puts the pieces together once, in C memory
const chunkSize = 4 << 20

// fastParse: the ANTLR path's answer for text (code 0 and the pickle, in pieces to be
// concatenated), or ok false: delegate.
func fastParse(text string, maxChain, maxDepth, maxEstimate int) (body [][]byte, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			body, ok = nil, false
		}
	}()
	if !utf8.ValidString(text) {
		return nil, false
	}
	f := &fparser{lx: lexer{src: text, line: 1}, toks: make([]ftok, 0, 256), nodes: make([]node, 0, 256),
		p: newPickler(min(len(text)*4, chunkSize+1<<16)), maxChain: maxChain, maxDepth: maxDepth}
	p := f.p
	p.begin("A", "Module")
	f.key(kyDecls)
	first := *f.at(0)
	if first.kind == kEOF {
		p.emptyTuple()
	} else {
		p.mark()
	}
	last := first
	for f.cur() != kEOF {
		// a new declaration: drop the tokens and nodes of the last one
		n := copy(f.toks, f.toks[f.pos:])
		f.toks = f.toks[:n]
		f.pos = 0
		f.nodes = f.nodes[:0]
		d := f.decl()
		if cap(p.b)-len(p.b) < 1<<16 { // room for a declaration
			if len(p.b) >= chunkSize { // this piece is full: a new one
				body = append(body, p.b)
				p.b = make([]byte, 0, chunkSize+1<<16)
			} else { // grow by doubling (append grows by 1.25)
				b := make([]byte, len(p.b), min(2*cap(p.b), chunkSize)+1<<16)
				copy(b, p.b)
				p.b = b
			}
		}
		f.emitDecl(&d)
		last = f.toks[f.pos-1]
	}
	if first.kind != kEOF {
		p.tuple()
	}
	if f.lx.worst > maxEstimate {
		return nil, false
	}
	f.key(kySpan)
	p.span(span{int(first.line), int(first.col) + 1, int(last.line), int(last.col + last.n)})
	p.end()
	p.stop()
	return append(body, p.b), true
}

// ------------------------------------------------------------------------------- declarations

func (f *fparser) decl() fdecl {
	d := fdecl{docs0: int32(f.pos), chanParam: -1, params: -1, result: -1, body: -1, channel: -1, size: -1,
		via: -1, overName: -1, overKind: -1, requires: -1, fields: -1}
	for f.cur() == kDoc {
		f.consume()
		d.docsN++
	}
	d.kind = f.cur()
	d.first = f.consume()
	switch d.kind {
	case kModel:
		d.name = f.expect(kID)
	case kImport:
		d.name = f.expect(kString)
	case kChannel:
		d.name = f.expect(kID)
		d.attrs0 = int32(f.pos)
		for f.cur() == kID {
			f.consume()
			d.attrsN++
		}
	case kTable:
		d.name = f.expect(kID)
		if f.cur() == kLBracket {
			d.chanParam = f.channelParam()
		}
		d.params = f.paramList()
		f.expect(kArrow)
		d.result = f.typeRef()
	case kParam:
		d.name = f.expect(kID)
		if f.cur() == kLBracket {
			d.chanParam = f.channelParam()
		}
		f.expect(kColon)
		d.result = f.typeRef()
	case kTransmission:
		d.name = f.expect(kID)
		f.expect(kLBracket)
		d.channel = f.expect(kID)
		f.expect(kRBracket)
		f.expect(kLParen)
		d.size = f.expect(kID)
		f.expect(kRParen)
		if f.cur() == kVia {
			f.consume()
			d.via = f.expect(kID)
		}
		f.expect(kAssign)
		d.body = f.expr(1)
	case kDef, kAlgorithm:
		d.name = f.expect(kID)
		d.params = f.paramList()
		if f.cur() == kArrow {
			f.consume()
			d.result = f.typeRef()
		}
		if d.kind == kAlgorithm {
			if f.cur() == kOver {
				f.consume()
				if f.cur() == kID && f.la(1) == kColon {
					d.overName = f.consume()
					f.consume()
				}
				d.overKind = f.expect(kID)
			}
			if f.cur() == kWhere {
				f.consume()
				d.requires = f.expr(1)
			}
		}
		f.expect(kAssign)
		d.body = f.expr(1)
	case kConfig:
		d.name = f.expect(kID)
		f.expect(kLBrace)
		if f.cur() != kRBrace {
			tail := int32(-1)
			for {
				f.link(&d.fields, &tail, f.configField())
				if f.cur() != kComma {
					break
				}
				f.consume()
				if f.cur() == kRBrace {
					break
				}
			}
		}
		f.expect(kRBrace)
	default:
		f.fail()
	}
	d.last = int32(f.pos - 1)
	switch f.cur() { // program : decl* EOF
	case kEOF, kDoc, kModel, kImport, kChannel, kTable, kParam, kTransmission, kDef, kAlgorithm, kConfig:
	default:
		f.fail()
	}
	return d
}

// channelParam : '[' name=ID ':' type=typeRef ']'
func (f *fparser) channelParam() int32 {
	n := f.newNode(nParam, f.consume())
	f.nodes[n].tok = f.expect(kID)
	f.expect(kColon)
	t := f.typeRef()
	f.nodes[n].a = t
	f.expect(kRBracket)
	return f.done(n)
}

// '(' paramList? ')': the head of the parameters' list (-1: none)
func (f *fparser) paramList() int32 {
	f.expect(kLParen)
	head, tail := int32(-1), int32(-1)
	if f.cur() != kRParen {
		for {
			f.link(&head, &tail, f.param())
			if f.cur() != kComma {
				break
			}
			f.consume()
			if f.cur() == kRParen {
				break
			}
		}
	}
	f.expect(kRParen)
	return head
}

func isCompare(k uint8) bool { return k >= kLt && k <= kNe }

// param : name=ID ':' type=typeRef ('[' ranks=ID ']')? (op=compareOp bound=additive)? ('=' default=expr)?
// (node: tok name, a type, tok2 ranks, c op token as an index, b bound, d default)
func (f *fparser) param() int32 {
	n := f.newNode(nParam, int32(f.pos))
	f.nodes[n].tok = f.expect(kID)
	f.expect(kColon)
	t := f.typeRef()
	f.nodes[n].a = t
	if f.cur() == kLBracket {
		f.consume()
		f.nodes[n].tok2 = f.expect(kID)
		f.expect(kRBracket)
	}
	if isCompare(f.cur()) {
		f.nodes[n].c = f.consume()
		b := f.chain(levelAdditive, 1) // the encoder enters the bound (an additive) at depth 1
		f.nodes[n].b = b
		f.nodes[n].aux = int32(f.pos - 1)
	}
	if f.cur() == kAssign {
		f.consume()
		e := f.expr(1)
		f.nodes[n].d = e
	}
	return f.done(n)
}

// configField : name=ID ':' type=typeRef ('[' ranks=ID ']')?
func (f *fparser) configField() int32 {
	n := f.newNode(nField, int32(f.pos))
	f.nodes[n].tok = f.expect(kID)
	f.expect(kColon)
	t := f.typeRef()
	f.nodes[n].a = t
	if f.cur() == kLBracket {
		f.consume()
		r := f.expect(kID)
		if f.text(r) != "P" {
			f.fail() // the builder reports it
		}
		f.nodes[n].tok2 = r
		f.expect(kRBracket)
	}
	return f.done(n)
}

// typeRef : typeFactor (('*' | '/') typeFactor)* ; typeFactor : (ID | 'channel') ('^' '-'? NUMBER)?
// (its text is the text of its tokens, one after the other)
func (f *fparser) typeRef() int32 {
	n := f.newNode(nTypeRef, int32(f.pos))
	for {
		if k := f.cur(); k != kID && k != kChannel {
			f.fail()
		}
		f.consume()
		if f.cur() == kCaret {
			f.consume()
			if f.cur() == kMinus {
				f.consume()
			}
			f.expect(kNumber)
		}
		if k := f.cur(); k != kStar && k != kSlash {
			break
		}
		f.consume()
	}
	return f.done(n)
}

// ------------------------------------------------------------------------------- expressions
//
// Each function parses one grammar rule whose context encode.go enters at depth d (the
// encoder's depth counts one level per rule context, a chain's operands one below the chain).

// expr : let | if | reduction | orExpr
func (f *fparser) expr(d int) int32 {
	f.enter(d)
	switch k := f.cur(); {
	case k == kLet:
		n := f.newNode(nLet, f.consume())
		f.nodes[n].tok = f.expect(kID)
		f.expect(kAssign)
		v := f.expr(d + 1)
		f.nodes[n].a = v
		f.expect(kIn)
		b := f.expr(d + 1)
		f.nodes[n].b = b
		return f.done(n)
	case k == kIf:
		n := f.newNode(nIf, f.consume())
		t := f.expr(d + 1)
		f.nodes[n].a = t
		f.expect(kThen)
		t = f.expr(d + 1)
		f.nodes[n].b = t
		f.expect(kElse)
		t = f.expr(d + 1)
		f.nodes[n].c = t
		return f.done(n)
	case k == kSum || ((k == kMax || k == kMin) && f.la(1) == kID):
		n := f.newNode(nReduce, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		f.nodes[n].tok2 = f.expect(kID)
		f.expect(kIn)
		t := f.expr(d + 1)
		f.nodes[n].a = t
		f.expect(kDotDot)
		t = f.expr(d + 1)
		f.nodes[n].b = t
		f.expect(kColon)
		t = f.expr(d + 1)
		f.nodes[n].c = t
		return f.done(n)
	}
	return f.chain(levelOr, d+1)
}

// the left-associative chains, loosest first (notExpr and comparison sit between and/xor)
const (
	levelOr = iota
	levelAnd
	levelXor
	levelBitAnd
	levelShift
	levelAdditive
	levelConcurrent
	levelMultiplicative
)

func chainOp(level int, k uint8) bool {
	switch level {
	case levelOr:
		return k == kOr
	case levelAnd:
		return k == kAnd
	case levelXor:
		return k == kXor
	case levelBitAnd:
		return k == kAmp
	case levelShift:
		return k == kShl || k == kShr
	case levelAdditive:
		return k == kPlus || k == kMinus
	case levelConcurrent:
		return k == kConc
	case levelMultiplicative:
		return k == kStar || k == kSlash || k == kPercent || k == kDiv
	}
	return false
}

func (f *fparser) operand(level, d int) int32 {
	switch level {
	case levelOr:
		return f.chain(levelAnd, d)
	case levelAnd:
		return f.notExpr(d)
	case levelMultiplicative:
		return f.unary(d)
	}
	return f.chain(level+1, d)
}

// chain : operand (op operand)* (xor's operand is bitAnd and so on; and's is notExpr; the
// multiplicative's is unary); the AST is left associative, each Binary on its operands
func (f *fparser) chain(level, d int) int32 {
	f.enter(d)
	lhs := f.operand(level, d+1)
	ops := 0
	for chainOp(level, f.cur()) {
		op := f.consume()
		ops++
		if ops >= f.maxChain {
			f.fail() // the reference raises its error
		}
		rhs := f.operand(level, d+1)
		n := f.newNode(nBinary, -1)
		f.nodes[n].tok = op
		f.nodes[n].a = lhs
		f.nodes[n].b = rhs
		lhs = n
	}
	return lhs
}

// notExpr : 'not' notExpr | comparison ; comparison : bitXor (compareOp bitXor)?
func (f *fparser) notExpr(d int) int32 {
	f.enter(d)
	if f.cur() == kNot {
		n := f.newNode(nUnary, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		o := f.notExpr(d + 1)
		f.nodes[n].a = o
		return f.done(n)
	}
	// comparison, at d + 1
	f.enter(d + 1)
	lhs := f.chain(levelXor, d+2)
	if !isCompare(f.cur()) {
		return lhs
	}
	op := f.consume()
	rhs := f.chain(levelXor, d+2)
	n := f.newNode(nBinary, -1)
	f.nodes[n].tok = op
	f.nodes[n].a = lhs
	f.nodes[n].b = rhs
	return n
}

// unary : '-' unary | power ; power : postfix ('^' unary)?
func (f *fparser) unary(d int) int32 {
	f.enter(d)
	if f.cur() == kMinus {
		n := f.newNode(nUnary, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		o := f.unary(d + 1)
		f.nodes[n].a = o
		return f.done(n)
	}
	// power, at d + 1
	f.enter(d + 1)
	base := f.postfix(d + 2)
	if f.cur() != kCaret {
		return base
	}
	op := f.consume()
	exp := f.unary(d + 2)
	n := f.newNode(nBinary, -1)
	f.nodes[n].tok = op
	f.nodes[n].a = base
	f.nodes[n].b = exp
	return n
}

// postfix : callName ('[' expr ']')? '(' argList? ')' | ID '[' expr ']' | ID '.' ID ('[' expr ']')? | atom
func (f *fparser) postfix(d int) int32 {
	f.enter(d)
	switch f.cur() {
	case kID:
		switch f.la(1) {
		case kLParen:
			n := f.newNode(nCall, f.consume())
			f.nodes[n].tok = f.nodes[n].first
			return f.callArgs(n, d)
		case kLBracket:
			first := f.consume()
			f.consume()
			ch := f.expr(d + 1)
			f.expect(kRBracket)
			if f.cur() == kLParen {
				n := f.newNode(nCall, first)
				f.nodes[n].tok = first
				f.nodes[n].a = ch
				return f.callArgs(n, d)
			}
			n := f.newNode(nIndexed, first)
			f.nodes[n].tok = first
			f.nodes[n].a = ch
			return f.done(n)
		case kDot:
			n := f.newNode(nConfigAccess, f.consume())
			f.nodes[n].tok = f.nodes[n].first
			f.consume()
			f.nodes[n].tok2 = f.expect(kID)
			if f.cur() == kLBracket {
				f.consume()
				i := f.expr(d + 1)
				f.nodes[n].a = i
				f.expect(kRBracket)
			}
			return f.done(n)
		}
	case kMax, kMin:
		n := f.newNode(nCall, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		if f.cur() == kLBracket {
			f.consume()
			ch := f.expr(d + 1)
			f.nodes[n].a = ch
			f.expect(kRBracket)
		}
		return f.callArgs(n, d)
	}
	return f.atom(d + 1)
}

// '(' argList? ')' of call n ; argList : arg (',' arg)* ','? ; arg : (name=ID '=')? value=expr
func (f *fparser) callArgs(n int32, d int) int32 {
	f.expect(kLParen)
	head, tail := int32(-1), int32(-1)
	if f.cur() != kRParen {
		for {
			a := f.newNode(nArg, int32(f.pos))
			if f.cur() == kID && f.la(1) == kAssign {
				f.nodes[a].tok2 = f.consume()
				f.consume()
			}
			v := f.expr(d + 1)
			f.nodes[a].a = v
			f.done(a)
			f.link(&head, &tail, a)
			if f.cur() != kComma {
				break
			}
			f.consume()
			if f.cur() == kRParen {
				break
			}
		}
	}
	f.expect(kRParen)
	f.nodes[n].list = head
	return f.done(n)
}

// atom : NUMBER | ID | '(' expr ')' | 'stage' '{' item* '}' | 'stages' ID 'in' expr '..' expr '{' item* '}'
func (f *fparser) atom(d int) int32 {
	f.enter(d)
	switch f.cur() {
	case kNumber:
		n := f.newNode(nNumber, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		return n
	case kID:
		n := f.newNode(nName, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		return n
	case kLParen:
		f.consume()
		inner := f.expr(d + 1)
		f.expect(kRParen)
		return inner
	case kStage:
		n := f.newNode(nStage, f.consume())
		f.expect(kLBrace)
		items := f.items(d + 1)
		f.nodes[n].list = items
		return f.done(n)
	case kStages:
		n := f.newNode(nStages, f.consume())
		f.nodes[n].tok2 = f.expect(kID)
		f.expect(kIn)
		t := f.expr(d + 1)
		f.nodes[n].a = t
		f.expect(kDotDot)
		t = f.expr(d + 1)
		f.nodes[n].b = t
		f.expect(kLBrace)
		items := f.items(d + 1)
		f.nodes[n].list = items
		return f.done(n)
	}
	f.fail()
	return -1
}

// ------------------------------------------------------------------------------- schedules

// items: item* '}' (after the '{'), each item entered at depth d; the list's head
func (f *fparser) items(d int) int32 {
	head, tail := int32(-1), int32(-1)
	for {
		switch f.cur() {
		case kPar, kSeq, kSend, kCompute, kReduce, kLBrace:
			f.link(&head, &tail, f.item(d))
			continue
		}
		break
	}
	f.expect(kRBrace)
	return head
}

func (f *fparser) item(d int) int32 {
	f.enter(d)
	switch k := f.cur(); k {
	case kPar, kSeq:
		n := f.newNode(nLoop, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		f.nodes[n].tok2 = f.expect(kID)
		f.expect(kIn)
		t := f.expr(d + 1)
		f.nodes[n].a = t
		f.expect(kDotDot)
		t = f.expr(d + 1)
		f.nodes[n].b = t
		if f.cur() == kWhere {
			f.consume()
			t = f.expr(d + 1)
			f.nodes[n].c = t
		}
		f.expect(kColon)
		t = f.item(d + 1)
		f.nodes[n].d = t
		return f.done(n)
	case kSend:
		n := f.newNode(nSend, f.consume())
		t := f.expr(d + 1)
		f.nodes[n].a = t
		f.expect(kArrow)
		t = f.expr(d + 1)
		f.nodes[n].b = t
		f.expect(kColon)
		t = f.expr(d + 1)
		f.nodes[n].c = t
		if f.cur() == kID {
			kw := f.consume()
			if f.text(kw) != "weight" {
				f.fail() // the builder reports it
			}
			f.nodes[n].tok2 = kw
			t = f.expr(d + 1)
			f.nodes[n].d = t
		}
		return f.done(n)
	case kCompute, kReduce:
		n := f.newNode(nCompute, f.consume())
		f.nodes[n].tok = f.nodes[n].first
		t := f.expr(d + 1)
		f.nodes[n].a = t
		f.expect(kColon)
		t = f.expr(d + 1)
		f.nodes[n].b = t
		return f.done(n)
	case kLBrace:
		n := f.newNode(nBlock, f.consume())
		items := f.items(d + 1)
		f.nodes[n].list = items
		return f.done(n)
	}
	f.fail()
	return -1
}

// ------------------------------------------------------------------------------- writing
//
// The same pickler calls as encode.go, in the same order.

func (f *fparser) docs(d *fdecl) {
	p := f.p
	if d.docsN == 0 {
		p.emptyTuple()
		return
	}
	p.mark()
	for i := d.docs0; i < d.docs0+d.docsN; i++ {
		p.str(strings.TrimFunc(f.text(i)[3:], pySpace))
	}
	p.tuple()
}

func (f *fparser) optStr(s string) {
	if s == "" {
		f.p.none()
	} else {
		f.p.str(s)
	}
}

func (f *fparser) optTok(t int32) {
	if t < 0 {
		f.p.none()
	} else {
		f.p.str(f.text(t))
	}
}

func (f *fparser) optExpr(n int32) {
	if n < 0 {
		f.p.none()
	} else {
		f.emit(n)
	}
}

func (f *fparser) emitDecl(d *fdecl) {
	p := f.p
	s := f.rangeSpan(d.first, d.last)
	switch d.kind {
	case kModel:
		p.begin("A", "ModelDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyDocs)
		f.docs(d)
		f.key(kySpan)
		p.span(s)
	case kImport:
		p.begin("A", "ImportDecl")
		f.key(kyPath)
		p.str(unquote(f.text(d.name)))
		f.key(kyDocs)
		f.docs(d)
		f.key(kySpan)
		p.span(s)
	case kChannel:
		placement, contention := "", ""
		for i := int32(0); i < d.attrsN; {
			w := f.text(d.attrs0 + i)
			nxt := ""
			if i+1 < d.attrsN {
				nxt = f.text(d.attrs0 + i + 1)
			}
			if want, ok := channelPlacements[w]; ok && placement == "" {
				if i+1 >= d.attrsN || nxt != want {
					f.fail()
				}
				placement = w
			} else if w == "contention" && contention == "" {
				if i+1 >= d.attrsN || !contentionKeys[nxt] {
					f.fail()
				}
				contention = nxt
			} else {
				f.fail()
			}
			i += 2
		}
		p.begin("A", "ChannelDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyDocs)
		f.docs(d)
		f.key(kyPlacement)
		f.optStr(placement)
		f.key(kyContention)
		f.optStr(contention)
		f.key(kySpan)
		p.span(s)
	case kTable:
		p.begin("A", "TableDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyChannel)
		f.channelParam2(d.chanParam)
		f.key(kyParams)
		f.params(d.params)
		f.key(kyResult)
		f.typeRef2(d.result)
		f.key(kyDocs)
		f.docs(d)
		f.key(kySpan)
		p.span(s)
	case kParam:
		p.begin("A", "ParamDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyChannel)
		f.channelParam2(d.chanParam)
		f.key(kyType)
		f.typeRef2(d.result)
		f.key(kyDocs)
		f.docs(d)
		f.key(kySpan)
		p.span(s)
	case kTransmission:
		p.begin("A", "TransmissionDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyChannel)
		p.str(f.text(d.channel))
		f.key(kyParam)
		p.str(f.text(d.size))
		f.key(kyVia)
		f.optTok(d.via)
		f.key(kyBody)
		f.emit(d.body)
		f.key(kyDocs)
		f.docs(d)
		f.key(kySpan)
		p.span(s)
		f.key(kyChannelSpan)
		p.span(f.tokSpan(d.channel))
	case kDef:
		p.begin("A", "DefDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyParams)
		f.params(d.params)
		f.key(kyResult)
		f.optTypeRef(d.result)
		f.key(kyBody)
		f.emit(d.body)
		f.key(kyDocs)
		f.docs(d)
		f.key(kySpan)
		p.span(s)
	case kAlgorithm:
		over := ""
		if d.overKind >= 0 {
			if f.text(d.overKind) != "mapping" {
				f.fail() // the builder reports it
			}
			over = "mapping"
			if d.overName >= 0 {
				over = f.text(d.overName)
			}
		}
		p.begin("A", "AlgorithmDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyParams)
		f.params(d.params)
		f.key(kyResult)
		f.optTypeRef(d.result)
		f.key(kyBody)
		f.emit(d.body)
		f.key(kyDocs)
		f.docs(d)
		f.key(kyOver)
		f.optStr(over)
		f.key(kySpan)
		p.span(s)
		f.key(kyRequires)
		f.optExpr(d.requires)
	case kConfig:
		p.begin("A", "ConfigDecl")
		f.key(kyName)
		p.str(f.text(d.name))
		f.key(kyFields)
		if d.fields < 0 {
			p.emptyTuple()
		} else {
			p.mark()
			for n := d.fields; n >= 0; n = f.nodes[n].next {
				fl := &f.nodes[n]
				p.begin("A", "ConfigField")
				f.key(kyName)
				p.str(f.text(fl.tok))
				f.key(kyType)
				f.typeRef2(fl.a)
				f.key(kyPerRank)
				p.bool(fl.tok2 >= 0)
				f.key(kySpan)
				p.span(f.ctx(n))
				p.end()
			}
			p.tuple()
		}
		f.key(kyDocs)
		f.docs(d)
		f.key(kySpan)
		p.span(s)
	default:
		f.fail()
	}
	p.end()
}

func (f *fparser) channelParam2(n int32) {
	p := f.p
	if n < 0 {
		p.none()
		return
	}
	c := &f.nodes[n]
	p.begin("A", "Param")
	f.key(kyName)
	p.str(f.text(c.tok))
	f.key(kyType)
	f.typeRef2(c.a)
	f.key(kyOp)
	p.none()
	f.key(kyBound)
	p.none()
	f.key(kyDefault)
	p.none()
	f.key(kySpan)
	p.span(f.ctx(n))
	f.key(kyConstraintSpan)
	p.none()
	f.key(kyPerRank)
	p.none()
	f.key(kyPerRankSpan)
	p.none()
	p.end()
}

func (f *fparser) params(head int32) {
	p := f.p
	if head < 0 {
		p.emptyTuple()
		return
	}
	p.mark()
	for n := head; n >= 0; n = f.nodes[n].next {
		f.param2(n)
	}
	p.tuple()
}

func (f *fparser) param2(n int32) {
	p := f.p
	c := &f.nodes[n]
	p.begin("A", "Param")
	f.key(kyName)
	p.str(f.text(c.tok))
	f.key(kyType)
	f.typeRef2(c.a)
	f.key(kyOp)
	f.optTok(c.c)
	f.key(kyBound)
	if c.c >= 0 {
		f.emit(c.b)
	} else {
		p.none()
	}
	f.key(kyDefault)
	f.optExpr(c.d)
	f.key(kySpan)
	p.span(f.ctx(n))
	f.key(kyConstraintSpan)
	if c.c >= 0 {
		p.span(f.rangeSpan(c.c, c.aux)) // ctxSpan(op).to(ctxSpan(bound))
	} else {
		p.none()
	}
	f.key(kyPerRank)
	f.optTok(c.tok2)
	f.key(kyPerRankSpan)
	if c.tok2 >= 0 {
		p.span(f.tokSpan(c.tok2))
	} else {
		p.none()
	}
	p.end()
}

func (f *fparser) optTypeRef(n int32) {
	if n < 0 {
		f.p.none()
	} else {
		f.typeRef2(n)
	}
}

func (f *fparser) typeRef2(n int32) {
	c := &f.nodes[n]
	text := f.text(c.first)
	if c.last > c.first {
		var b strings.Builder
		for t := c.first; t <= c.last; t++ {
			b.WriteString(f.text(t))
		}
		text = b.String()
	}
	p := f.p
	p.begin("A", "TypeRef")
	f.key(kyName)
	p.str(text)
	f.key(kySpan)
	p.span(f.ctx(n))
	p.end()
}

// emit writes the AST of an expression node; returns its span (as encode.go's expr)
func (f *fparser) emit(i int32) span {
	p := f.p
	n := &f.nodes[i]
	switch n.kind {
	case nLet:
		s := f.ctx(i)
		p.begin("A", "LetIn")
		f.key(kyName)
		p.str(f.text(n.tok))
		f.key(kyValue)
		f.emit(n.a)
		f.key(kyBody)
		f.emit(n.b)
		f.key(kySpan)
		p.span(s)
		f.key(kyNameSpan)
		p.span(f.tokSpan(n.tok))
		p.end()
		return s
	case nIf:
		s := f.ctx(i)
		p.begin("A", "IfThen")
		f.key(kyTest)
		f.emit(n.a)
		f.key(kyThen)
		f.emit(n.b)
		f.key(kyOtherwise)
		f.emit(n.c)
		f.key(kySpan)
		p.span(s)
		p.end()
		return s
	case nReduce:
		s := f.ctx(i)
		p.begin("A", "Reduction")
		f.key(kyKind)
		p.str(f.text(n.tok))
		f.key(kyVar)
		p.str(f.text(n.tok2))
		f.key(kyLo)
		f.emit(n.a)
		f.key(kyHi)
		f.emit(n.b)
		f.key(kyBody)
		f.emit(n.c)
		f.key(kySpan)
		p.span(s)
		f.key(kyVarSpan)
		p.span(f.tokSpan(n.tok2))
		p.end()
		return s
	case nBinary:
		p.begin("A", "Binary")
		f.key(kyOp)
		p.str(f.text(n.tok))
		f.key(kyLhs)
		ls := f.emit(n.a)
		f.key(kyRhs)
		rs := f.emit(n.b)
		f.key(kySpan)
		p.span(ls.to(rs))
		f.key(kyOpSpan)
		p.span(f.tokSpan(n.tok))
		p.end()
		return ls.to(rs)
	case nUnary:
		s := f.ctx(i)
		p.begin("A", "Unary")
		f.key(kyOp)
		p.str(f.text(n.tok))
		f.key(kyOperand)
		f.emit(n.a)
		f.key(kySpan)
		p.span(s)
		p.end()
		return s
	case nCall:
		s := f.ctx(i)
		p.begin("A", "Call")
		f.key(kyCallee)
		p.str(f.text(n.tok))
		f.key(kyChannel)
		f.optExpr(n.a)
		f.key(kyArgs)
		if n.list < 0 {
			p.emptyTuple()
		} else {
			p.mark()
			for ai := n.list; ai >= 0; ai = f.nodes[ai].next {
				a := &f.nodes[ai]
				p.begin("A", "Arg")
				f.key(kyName)
				f.optTok(a.tok2)
				f.key(kyValue)
				f.emit(a.a)
				f.key(kySpan)
				p.span(f.ctx(ai))
				p.end()
			}
			p.tuple()
		}
		f.key(kySpan)
		p.span(s)
		f.key(kyCalleeSpan)
		p.span(f.tokSpan(n.tok))
		p.end()
		return s
	case nIndexed:
		s := f.ctx(i)
		p.begin("A", "Indexed")
		f.key(kyId)
		p.str(f.text(n.tok))
		f.key(kyChannel)
		f.emit(n.a)
		f.key(kySpan)
		p.span(s)
		p.end()
		return s
	case nConfigAccess:
		s := f.ctx(i)
		p.begin("A", "ConfigAccess")
		f.key(kyConfig)
		p.str(f.text(n.tok))
		f.key(kyField)
		p.str(f.text(n.tok2))
		f.key(kyIndex)
		f.optExpr(n.a)
		f.key(kySpan)
		p.span(s)
		p.end()
		return s
	case nNumber:
		s := f.ctx(i)
		v, unit := splitNumber(f.text(n.tok))
		p.begin("A", "Number")
		f.key(kyValue)
		p.float(v)
		f.key(kyUnit)
		p.str(unit)
		f.key(kySpan)
		p.span(s)
		p.end()
		return s
	case nName:
		s := f.ctx(i)
		p.begin("A", "Name")
		f.key(kyId)
		p.str(f.text(n.tok))
		f.key(kySpan)
		p.span(s)
		p.end()
		return s
	case nStage:
		s := f.ctx(i)
		p.begin("A", "Stage")
		f.key(kyItems)
		f.emitItems(n.list)
		f.key(kySpan)
		p.span(s)
		p.end()
		return s
	case nStages:
		s := f.ctx(i)
		p.begin("A", "Stages")
		f.key(kyVar)
		p.str(f.text(n.tok2))
		f.key(kyLo)
		f.emit(n.a)
		f.key(kyHi)
		f.emit(n.b)
		f.key(kyItems)
		f.emitItems(n.list)
		f.key(kySpan)
		p.span(s)
		f.key(kyVarSpan)
		p.span(f.tokSpan(n.tok2))
		p.end()
		return s
	}
	f.fail()
	return span{}
}

func (f *fparser) emitItems(head int32) {
	p := f.p
	if head < 0 {
		p.emptyTuple()
		return
	}
	p.mark()
	for n := head; n >= 0; n = f.nodes[n].next {
		f.emitItem(n)
	}
	p.tuple()
}

func (f *fparser) emitItem(i int32) {
	p := f.p
	n := &f.nodes[i]
	switch n.kind {
	case nLoop:
		p.begin("A", "LoopItem")
		f.key(kyKind)
		p.str(f.text(n.tok))
		f.key(kyVar)
		p.str(f.text(n.tok2))
		f.key(kyLo)
		f.emit(n.a)
		f.key(kyHi)
		f.emit(n.b)
		f.key(kyWhere)
		f.optExpr(n.c)
		f.key(kyBody)
		f.emitItem(n.d)
		f.key(kySpan)
		p.span(f.ctx(i))
		f.key(kyVarSpan)
		p.span(f.tokSpan(n.tok2))
		p.end()
	case nSend:
		p.begin("A", "SendItem")
		f.key(kySrc)
		f.emit(n.a)
		f.key(kyDst)
		f.emit(n.b)
		f.key(kySize)
		f.emit(n.c)
		f.key(kyWeight)
		f.optExpr(n.d)
		f.key(kySpan)
		p.span(f.ctx(i))
		p.end()
	case nCompute:
		p.begin("A", "ComputeItem")
		f.key(kyKind)
		p.str(f.text(n.tok))
		f.key(kyRank)
		f.emit(n.a)
		f.key(kyAmount)
		f.emit(n.b)
		f.key(kySpan)
		p.span(f.ctx(i))
		p.end()
	case nBlock:
		p.begin("A", "BlockItem")
		f.key(kyItems)
		f.emitItems(n.list)
		f.key(kySpan)
		p.span(f.ctx(i))
		p.end()
	default:
		f.fail()
	}
}
