package main

import (
	"strings"
	"testing"
	"time"
)

// The budget reads per accepted commit, beside what the cores offered and
// the rate the parties' CPU alone allows.
func TestBudgetTextPerCommit(t *testing.T) {
	b := Budget{Wall: time.Second, Writers: 1200 * time.Millisecond, Seaweed: 600 * time.Millisecond,
		Loadgen: 200 * time.Millisecond, Machine: 2100 * time.Millisecond, Cores: 2}
	got := budgetText(b, 100)
	for _, want := range []string{"writers 12", "SeaweedFS 6", "load generator 2", "sum 20", "others 1", "offered 20", "allows 100/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if budgetText(Budget{}, 100) != "not measured" || budgetText(b, 0) != "not measured" {
		t.Error("an empty budget or no accepted commit reads as measured")
	}
	if (Budget{Machine: time.Second, Writers: 2 * time.Second}).Others() != 0 {
		t.Error("others below zero")
	}
}
