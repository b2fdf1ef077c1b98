// Package main is the native .tlop parser, a C shared library loaded by tlop.frontend.native.
//
// What it does: parses a source and writes its AST as a pickle (pickle.go), by two paths.  The
// fast path (fastlex.go, fastparse.go: a hand-written lexer and recursive-descent parser) answers
// first; whenever it is not sure, it delegates to the ANTLR path, which lexes and parses with the
// ANTLR Go target generated from the same grammar/Tlop.g4 as the Python parser (grammar/_antlr_go,
// by grammar/generate.sh), in ANTLR's SLL mode first and in full LL mode when SLL reports an error
// (an SLL parse without errors is the LL parse), and walks the tree (encode.go).  Whenever the
// fast path answers, the ANTLR path answers the same bytes (tlop_parse_mode runs either alone,
// for the tests that check it).
//
// What it does not do: report errors.  On a syntax error, or anything the Python builder would
// report, the answer is a fallback code and tlop parses the source with the Python ANTLR parser,
// the reference, which reports it (so diagnostics are byte-identical whichever parser is built).
package main

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"unsafe"

	"github.com/antlr4-go/antlr/v4"
	tp "tlopgrammar/_antlr_go"
)

// the field order of each AST class written by encode.go; tlop.frontend.native compares it with
// tlop.frontend.ast's dataclasses before using the library
const schema = "Module:decls,span;ModelDecl:name,docs,span;ImportDecl:path,docs,span;" +
	"ChannelDecl:name,docs,placement,contention,span;TableDecl:name,channel,params,result,docs,span;" +
	"ParamDecl:name,channel,type,docs,span;TransmissionDecl:name,channel,param,via,body,docs,span,channel_span;" +
	"DefDecl:name,params,result,body,docs,span;AlgorithmDecl:name,params,result,body,docs,over,span,requires;" +
	"ConfigDecl:name,fields,docs,span;ConfigField:name,type,per_rank,span;" +
	"Param:name,type,op,bound,default,span,constraint_span,per_rank,per_rank_span;TypeRef:name,span;" +
	"LetIn:name,value,body,span,name_span;IfThen:test,then,otherwise,span;" +
	"Reduction:kind,var,lo,hi,body,span,var_span;Unary:op,operand,span;Binary:op,lhs,rhs,span,op_span;" +
	"Call:callee,channel,args,span,callee_span;Arg:name,value,span;Indexed:id,channel,span;" +
	"ConfigAccess:config,field,index,span;Number:value,unit,span;Name:id,span;Stage:items,span;" +
	"Stages:var,lo,hi,items,span,var_span;LoopItem:kind,var,lo,hi,where,body,span,var_span;" +
	"SendItem:src,dst,size,weight,span;ComputeItem:kind,rank,amount,span;BlockItem:items,span;" +
	"Span:source,line,col,end_line,end_col"

type errorFlag struct {
	*antlr.DefaultErrorListener
	seen bool
}

func (f *errorFlag) SyntaxError(_ antlr.Recognizer, _ interface{}, _, _ int, _ string, _ antlr.RecognitionException) {
	f.seen = true
}

// depth bound before parsing: the parser recurses once per nesting level, and a Go stack
// overflow cannot be recovered; a bracket level is at most ~20 rule levels, a prefix word or
// operator at most 3
func nestingEstimate(tokens []antlr.Token) int {
	worst, depth, prefix := 0, 0, 0
	for _, t := range tokens {
		switch t.GetText() {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth > 0 {
				depth--
			}
		case "-", "not", "^", "let", "if", "sum", "max", "min", "par", "seq", "stages", "stage":
			prefix++
		case "model", "import", "channel", "table", "param", "transmission", "def", "algorithm", "config":
			if depth == 0 {
				prefix = 0
			}
		}
		if est := 20*(depth+1) + 3*prefix; est > worst {
			worst = est
		}
	}
	return worst
}

// answer: the code byte and the pieces of the body, one after the other, in C memory
func answer(code byte, body [][]byte) (*C.char, C.longlong) {
	n := 1
	for _, b := range body {
		n += len(b)
	}
	out := C.malloc(C.size_t(n))
	buf := unsafe.Slice((*byte)(out), n)
	buf[0] = code
	at := 1
	for _, b := range body {
		at += copy(buf[at:], b)
	}
	return (*C.char)(out), C.longlong(n)
}

// memoryLimit: the Go heap a parse may grow to before the collector runs (a parse allocates
// about 20 KB a declaration, garbage once the declaration is written: collecting as often as Go
// would, about every 4 MB, was two thirds of the time)
const memoryLimit = 1 << 30

func parse(text string, maxChain, maxDepth, maxEstimate int) (code byte, body []byte) {
	gc := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(memoryLimit)
	defer func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
		runtime.GC()
	}()
	defer func() {
		if r := recover(); r != nil {
			if s, ok := r.(stopped); ok {
				code, body = s.code, nil
				return
			}
			code, body = fbPanic, []byte(fmt.Sprint(r))
		}
	}()
	flag := &errorFlag{DefaultErrorListener: antlr.NewDefaultErrorListener()}
	lexer := tp.NewTlopLexer(antlr.NewInputStream(text))
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(flag)
	stream := antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel)
	stream.Fill()
	if flag.seen {
		return fbSyntax, nil
	}
	if nestingEstimate(stream.GetAllTokens()) > maxEstimate {
		return fbDeep, nil
	}
	enc := &encoder{p: newPickler(len(text) * 2), maxChain: maxChain, maxDepth: maxDepth}
	e := enc.p
	// program : decl* EOF, one declaration at a time: only one declaration's parse tree is alive
	// (the tokens are: about 100 bytes each)
	e.begin("A", "Module")
	e.key("decls")
	first := stream.LT(1)
	if first.GetTokenType() == antlr.TokenEOF {
		e.emptyTuple()
	} else {
		e.mark()
	}
	parser := tp.NewTlopParser(stream)
	parser.RemoveErrorListeners()
	parser.AddErrorListener(flag)
	parser.GetInterpreter().SetPredictionMode(antlr.PredictionModeSLL)
	parser.SetErrorHandler(noSync{antlr.NewDefaultErrorStrategy()})
	for stream.LA(1) != antlr.TokenEOF {
		if !declStart(stream.LT(1)) {
			return fbSyntax, nil // the reference reports what the program rule expects
		}
		start := stream.Index()
		decl := parser.Decl()
		if flag.seen { // SLL failed: full LL decides (an SLL parse without errors is the LL one)
			flag.seen = false
			stream.Seek(start)
			ll := tp.NewTlopParser(stream)
			ll.RemoveErrorListeners()
			ll.AddErrorListener(flag)
			ll.GetInterpreter().SetPredictionMode(antlr.PredictionModeLL)
			decl = ll.Decl()
			if flag.seen {
				return fbSyntax, nil
			}
		}
		enc.decl(decl.(*tp.DeclContext))
	}
	if first.GetTokenType() != antlr.TokenEOF {
		e.tuple()
	}
	// the program's span, as the program rule's context has it: its first token to the last one
	// before EOF (the first when there is none)
	last := stream.LT(-1)
	if last == nil || last.GetTokenIndex() < first.GetTokenIndex() {
		last = first
	}
	e.key("span")
	e.span(span{first.GetLine(), first.GetColumn() + 1, last.GetLine(), last.GetColumn() + textLen(last)})
	e.end()
	e.stop()
	return 0, e.b
}

// noSync: ANTLR's default error strategy without its Sync, which checks the lookahead at every
// loop of every rule to recover early; an error is still reported where a token does not match
// or no alternative is viable (as with ANTLR's BailErrorStrategy, whose Sync does nothing too),
// and any error sends the declaration to the LL parse, then the source to the reference parser
type noSync struct{ *antlr.DefaultErrorStrategy }

func (noSync) Sync(antlr.Parser) {}

// declStart: whether a token can start a declaration (FIRST(decl) of the grammar: a doc comment
// or a declaration's keyword)
func declStart(t antlr.Token) bool {
	if t.GetTokenType() == tp.TlopParserDOC_COMMENT {
		return true
	}
	switch t.GetText() {
	case "model", "import", "channel", "table", "param", "transmission", "def", "algorithm", "config":
		return true
	}
	return false
}

// parse modes of tlop_parse_mode
const (
	modeAuto  = 0 // the fast path (fastparse.go), the ANTLR path when it delegates: tlop_parse
	modeFast  = 1 // the fast path alone: fbDelegate when it delegates
	modeANTLR = 2 // the ANTLR path alone
)

// fbDelegate: the answer of modeFast when the fast path leaves the source to the ANTLR path
const fbDelegate = 6

func parseMode(text string, maxChain, maxDepth, maxEstimate, mode int) (byte, [][]byte) {
	if mode != modeANTLR {
		if body, ok := fastParse(text, maxChain, maxDepth, maxEstimate); ok {
			return 0, body
		}
		if mode == modeFast {
			return fbDelegate, nil
		}
	}
	code, body := parse(text, maxChain, maxDepth, maxEstimate)
	return code, [][]byte{body}
}

// tlop_parse parses n bytes of UTF-8 at src; the answer (malloc'd, freed by tlop_free) is a
// code byte — 0 then a pickled tlop.frontend.ast.Module, else a fallback code — and its
// length is stored at *outLen.  The fast path answers first; whatever it is not sure of, the
// ANTLR path answers (the same bytes whenever both answer).
//
//export tlop_parse
func tlop_parse(src *C.char, n C.longlong, maxChain, maxDepth, maxEstimate C.int, outLen *C.longlong) *C.char {
	return tlop_parse_mode(src, n, maxChain, maxDepth, maxEstimate, modeAuto, outLen)
}

// tlop_parse_mode: tlop_parse by one path (mode: 0 both, 1 the fast path alone — code 6 when it
// delegates —, 2 the ANTLR path alone), for the tests that compare the two.
//
//export tlop_parse_mode
func tlop_parse_mode(src *C.char, n C.longlong, maxChain, maxDepth, maxEstimate, mode C.int,
	outLen *C.longlong) *C.char {
	text := C.GoStringN(src, C.int(n))
	code, body := parseMode(text, int(maxChain), int(maxDepth), int(maxEstimate), int(mode))
	out, size := answer(code, body)
	*outLen = size
	return out
}

//export tlop_free
func tlop_free(p *C.char) { C.free(unsafe.Pointer(p)) }

// tlop_schema: the field order of every class encode.go writes (a static string).
//
//export tlop_schema
func tlop_schema() *C.char { return C.CString(schema) }

func main() {}
