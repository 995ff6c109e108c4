package dircall

import (
	"errors"
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// A commit that found the store older than the directory's record is
// refused as a lost baseline with the text that says how to recover,
// however deep the sentinel is wrapped; a domain error already built
// passes through unchanged.
func TestMapErrTellsARecordNewerThanTheStore(t *testing.T) {
	de := MapErr(fmt.Errorf("build: %w", fmt.Errorf("generation 3: %w", ErrRecordNewer)))
	if de.Code != diag.CodeEngineFailed || de.Reason != diag.ReasonBaselineLost || de.Message != OutlivedRecord().Message {
		t.Fatalf("got %s/%s %q", de.Code, de.Reason, de.Message)
	}
	own := diag.InvalidRequest(diag.ReasonInvalidArgument, "mine")
	if got := MapErr(fmt.Errorf("wrapped: %w", errors.Join(own, ErrRecordNewer))); got != own {
		t.Fatalf("a domain error was rebuilt: %v", got)
	}
}

// Content is found by ID only at paths the scan read from L: a virtual
// path (A's file where L ignores it) is never re-read from L.
func TestScanFindsContentOnlyWhereLHoldsIt(t *testing.T) {
	id := func(s string) cas.ID {
		got, err := cas.WriteFile(nil, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a, v := id("a\n"), id("v\n")
	res := &Scan{
		Files:   map[string]cas.ID{"a.md": a, "ignored.md": v},
		Content: map[string][]byte{"a.md": []byte("a\n")},
		Virtual: map[string]bool{"ignored.md": true},
	}
	if p := res.PathOf(a); p != "a.md" {
		t.Fatalf("PathOf(a) = %q", p)
	}
	if p := res.PathOf(v); p != "" {
		t.Fatalf("PathOf names the virtual path %q", p)
	}
	if c, ok := res.ReadContent(a); !ok || string(c) != "a\n" {
		t.Fatalf("ReadContent(a) = %q, %v", c, ok)
	}
	if _, ok := res.ReadContent(v); ok {
		t.Fatal("ReadContent found content the scan never read")
	}
}
