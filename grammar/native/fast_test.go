package main

// A benchmark of the two paths on bench/bench_frontend_scale.py's source (3×10⁴ declarations):
// go test -run X -bench . ./native (in grammar/).  The Python tests are the specification.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func benchSource(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i%5 == 0 {
			fmt.Fprintf(&b, "def d%d(P: int, m: bytes) -> time = P * m * 0.2ns / 1B + %dus\n", i, i%97)
		} else {
			fmt.Fprintf(&b, "/// algorithm %d\nalgorithm a%d(P: int >= 1, m: bytes = 1KiB) = d%d(P, m) + log2(P) * 1us\n",
				i, i, i-i%5)
		}
	}
	return b.String()
}

func BenchmarkFast(b *testing.B) {
	text := benchSource(30000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := fastParse(text, 5000, 1500, 50000); !ok {
			b.Fatal("delegated")
		}
	}
}

func BenchmarkANTLR(b *testing.B) {
	text := benchSource(30000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code, _ := parse(text, 5000, 1500, 50000); code != 0 {
			b.Fatal("refused")
		}
	}
}

func TestSameBytes(t *testing.T) {
	text := benchSource(500)
	pieces, ok := fastParse(text, 5000, 1500, 50000)
	fast := string(bytes.Join(pieces, nil))
	code, antlr := parse(text, 5000, 1500, 50000)
	if !ok || code != 0 || fast != string(antlr) {
		t.Fatalf("fast ok=%v, ANTLR code %d, same bytes %v", ok, code, fast == string(antlr))
	}
}

// the fast path's lexer and parser alone (no pickle written)
func BenchmarkFastParseOnly(b *testing.B) {
	text := benchSource(30000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f := &fparser{lx: lexer{src: text, line: 1}, toks: make([]ftok, 0, 256), nodes: make([]node, 0, 256),
			maxChain: 5000, maxDepth: 1500}
		for f.cur() != kEOF {
			n := copy(f.toks, f.toks[f.pos:])
			f.toks = f.toks[:n]
			f.pos = 0
			f.nodes = f.nodes[:0]
			f.decl()
		}
	}
}
