package main

// The fast path's lexer: the tokens of grammar/Tlop.g4, as its ANTLR-generated lexer makes them.
//
// What it does: splits UTF-8 text into the grammar's tokens one at a time, on demand (the parser
// asks for the next one), by the same rules as the generated lexer: the longest match wins, and
// at equal length the grammar's literal strings ('channel', 'max', '->', …) win over ID; NUMBER
// takes its unit letters (µ included); STRING its backslash escapes (a backslash escapes any
// character, a newline too); '///' starts a DOC_COMMENT, '#' a skipped comment; spaces, tabs,
// CR and LF are skipped.  Each token keeps its byte range, its line, its column in code points
// (both as ANTLR counts them: only LF starts a line) and its length in code points.  It also
// keeps the token pre-scan of main.go (nestingEstimate) as it goes, token by token.
//
// What it does not do: handle anything the generated lexer would make an ERROR_CHAR (any other
// character, an unterminated string, a lone '!' or '|'), nor invalid UTF-8: it stops, and the
// source goes to the ANTLR path (an ERROR_CHAR is a syntax error there, never a parse).

import "unicode/utf8"

// token kinds: the grammar's literals, then NUMBER, STRING, ID, DOC_COMMENT, EOF
const (
	kEOF uint8 = iota
	kModel
	kImport
	kChannel
	kTable
	kLParen
	kRParen
	kArrow
	kParam
	kColon
	kTransmission
	kLBracket
	kRBracket
	kVia
	kAssign
	kDef
	kAlgorithm
	kWhere
	kConfig
	kLBrace
	kComma
	kRBrace
	kOver
	kStar
	kSlash
	kCaret
	kMinus
	kLt
	kLe
	kGt
	kGe
	kEq
	kNe
	kLet
	kIn
	kIf
	kThen
	kElse
	kSum
	kMax
	kMin
	kDotDot
	kOr
	kAnd
	kNot
	kXor
	kAmp
	kShl
	kShr
	kPlus
	kConc
	kPercent
	kDiv
	kDot
	kStage
	kStages
	kPar
	kSeq
	kSend
	kCompute
	kReduce
	kNumber
	kString
	kID
	kDoc
)

// keyword: the kind of an ID-shaped word (a literal of the grammar, else ID)
func keyword(w string) uint8 {
	switch w {
	case "model":
		return kModel
	case "import":
		return kImport
	case "channel":
		return kChannel
	case "table":
		return kTable
	case "param":
		return kParam
	case "transmission":
		return kTransmission
	case "via":
		return kVia
	case "def":
		return kDef
	case "algorithm":
		return kAlgorithm
	case "where":
		return kWhere
	case "config":
		return kConfig
	case "over":
		return kOver
	case "let":
		return kLet
	case "in":
		return kIn
	case "if":
		return kIf
	case "then":
		return kThen
	case "else":
		return kElse
	case "sum":
		return kSum
	case "max":
		return kMax
	case "min":
		return kMin
	case "or":
		return kOr
	case "and":
		return kAnd
	case "not":
		return kNot
	case "xor":
		return kXor
	case "div":
		return kDiv
	case "stage":
		return kStage
	case "stages":
		return kStages
	case "par":
		return kPar
	case "seq":
		return kSeq
	case "send":
		return kSend
	case "compute":
		return kCompute
	case "reduce":
		return kReduce
	}
	return kID
}

// ftok: one token; col is 0-based in code points (ANTLR's), n its length in code points (at
// least 1, as encode.go's textLen)
type ftok struct {
	kind       uint8
	start, end int32 // byte range in the source
	line, col  int32
	n          int32
}

// errLex: the lexer met something it leaves to the ANTLR path
type errLex struct{}

type lexer struct {
	src  string
	i    int // byte offset
	line int32
	col  int32 // code points since the last LF

	// nestingEstimate of main.go, kept token by token
	depth, prefix, worst int
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isIDPart(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// advance moves over src[l.i:j], counting lines and code points.
func (l *lexer) advance(j int) {
	for k := l.i; k < j; k++ {
		c := l.src[k]
		if c == '\n' {
			l.line++
			l.col = 0
		} else if c < 0x80 || c >= 0xC0 { // not a UTF-8 continuation byte: a new code point
			l.col++
		}
	}
	l.i = j
}

// unitAt: the byte length of a unit letter at j (an ASCII letter or µ), else 0
func (l *lexer) unitAt(j int) int {
	if j < len(l.src) {
		c := l.src[j]
		if isLetter(c) {
			return 1
		}
		if c == 0xC2 && j+1 < len(l.src) && l.src[j+1] == 0xB5 { // U+00B5 MICRO SIGN
			return 2
		}
	}
	return 0
}

// next lexes the next token into *t (EOF at the end); panics with errLex where the generated
// lexer would make an ERROR_CHAR.
func (l *lexer) next(t *ftok) {
	s := l.src
	for l.i < len(s) { // skipped: WS and COMMENT
		c := s[l.i]
		if c == ' ' || c == '\t' || c == '\r' {
			l.i++
			l.col++
		} else if c == '\n' {
			l.i++
			l.line++
			l.col = 0
		} else if c == '#' {
			j := l.i
			for j < len(s) && s[j] != '\n' && s[j] != '\r' {
				j++
			}
			l.advance(j)
		} else {
			break
		}
	}
	*t = ftok{start: int32(l.i), line: l.line, col: l.col}
	if l.i >= len(s) {
		t.kind = kEOF
		t.end = t.start
		t.n = 5 // the text of ANTLR's EOF token is "<EOF>"
		l.estimate(kEOF)
		return
	}
	i := l.i
	c := s[i]
	j := i + 1
	ascii := true
	switch {
	case isLetter(c) || c == '_':
		for j < len(s) && isIDPart(s[j]) {
			j++
		}
		t.kind = keyword(s[i:j])
	case isDigit(c):
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j += 2
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && isDigit(s[k]) {
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				j = k
			}
		}
		for {
			u := l.unitAt(j)
			if u == 0 {
				break
			}
			if u == 2 {
				ascii = false
			}
			j += u
		}
		t.kind = kNumber
	case c == '"':
		for {
			if j >= len(s) {
				panic(errLex{})
			}
			d := s[j]
			if d == '"' {
				j++
				break
			}
			if d == '\r' || d == '\n' {
				panic(errLex{})
			}
			if d == '\\' {
				if j+1 >= len(s) {
					panic(errLex{})
				}
				j++
				d = s[j]
			}
			if d >= 0x80 {
				_, size := utf8.DecodeRuneInString(s[j:])
				j += size
				ascii = false
			} else {
				j++
			}
		}
		t.kind = kString
	case c == '/':
		if j+1 < len(s) && s[j] == '/' && s[j+1] == '/' {
			for j < len(s) && s[j] != '\n' && s[j] != '\r' {
				if s[j] >= 0x80 {
					ascii = false
				}
				j++
			}
			t.kind = kDoc
		} else {
			t.kind = kSlash
		}
	default:
		t.kind, j = l.punct(c, j)
	}
	t.end = int32(j)
	if ascii && t.kind != kString { // one line, one column a byte
		t.n = int32(j - i)
		l.i = j
		l.col += t.n
	} else { // a string may hold an escaped LF
		t.n = int32(utf8.RuneCountInString(s[i:j]))
		l.advance(j)
	}
	l.estimate(t.kind)
}

// punct: the kind and end of the punctuation token starting with c (c's byte is at j-1)
func (l *lexer) punct(c byte, j int) (uint8, int) {
	s := l.src
	peek := byte(0)
	if j < len(s) {
		peek = s[j]
	}
	switch c {
	case '(':
		return kLParen, j
	case ')':
		return kRParen, j
	case '[':
		return kLBracket, j
	case ']':
		return kRBracket, j
	case '{':
		return kLBrace, j
	case '}':
		return kRBrace, j
	case ',':
		return kComma, j
	case ':':
		return kColon, j
	case '*':
		return kStar, j
	case '^':
		return kCaret, j
	case '&':
		return kAmp, j
	case '+':
		return kPlus, j
	case '%':
		return kPercent, j
	case '-':
		if peek == '>' {
			return kArrow, j + 1
		}
		return kMinus, j
	case '<':
		if peek == '=' {
			return kLe, j + 1
		}
		if peek == '<' {
			return kShl, j + 1
		}
		return kLt, j
	case '>':
		if peek == '=' {
			return kGe, j + 1
		}
		if peek == '>' {
			return kShr, j + 1
		}
		return kGt, j
	case '=':
		if peek == '=' {
			return kEq, j + 1
		}
		return kAssign, j
	case '!':
		if peek == '=' {
			return kNe, j + 1
		}
	case '|':
		if peek == '|' {
			return kConc, j + 1
		}
	case '.':
		if peek == '.' {
			return kDotDot, j + 1
		}
		return kDot, j
	}
	panic(errLex{}) // an ERROR_CHAR
}

// estimate: main.go's nestingEstimate, one token at a time
func (l *lexer) estimate(k uint8) {
	switch k {
	case kLParen, kLBracket, kLBrace:
		l.depth++
	case kRParen, kRBracket, kRBrace:
		if l.depth > 0 {
			l.depth--
		}
	case kMinus, kNot, kCaret, kLet, kIf, kSum, kMax, kMin, kPar, kSeq, kStages, kStage:
		l.prefix++
	case kModel, kImport, kChannel, kTable, kParam, kTransmission, kDef, kAlgorithm, kConfig:
		if l.depth == 0 {
			l.prefix = 0
		}
	}
	if est := 20*(l.depth+1) + 3*l.prefix; est > l.worst {
		l.worst = est
	}
}
