package diag

import "testing"

func TestScrubRemovesSecretsAndIDs(t *testing.T) {
	sc := NewScrubber("/home/u/.cache/slivingdoc", "s3cr3tVALUE")
	id64 := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := []struct{ in, want string }{
		{"read packs/increments/18-0190f1a2-7c3b-7def-8abc-0123456789ab.pack: EOF", "read <pack>: EOF"},
		{"packs/checkpoints/1024-0190f1a2-7c3b-7def-8abc-0123456789ab.pack", "<pack>"},
		{"proposals/00000000000000000001-0190f1a2-7c3b-7def-8abc-0123456789ab: no descriptor line", "<proposal>: no descriptor line"},
		{"probe/0190f1a2-7c3b-7def-8abc-0123456789ab failed", "<probe> failed"},
		{"object " + id64 + " missing", "object <id> missing"},
		{"commit 0123456789abcdef0123456789abcdef01234567", "commit <id>"},
		{"key AKIAIOSFODNN7EXAMPLE denied", "key <access-key> denied"},
		{"key ASIAY34FZKBOKMUTVV7A denied", "key <access-key> denied"},
		{"GET https://user:pw@s3.example.com/b", "GET https://s3.example.com/b"},
		{"lock /home/u/.cache/slivingdoc/dirs/x/lock busy", "lock <private>/dirs/x/lock busy"},
		{"token s3cr3tVALUE", "token <private>"},
		// Ordinary text and short hex (line numbers, generations) survive.
		{"notes/a.md lines 12-18 generation 0xff cafe", "notes/a.md lines 12-18 generation 0xff cafe"},
	}
	for _, c := range cases {
		if got := sc.Text(c.in); got != c.want {
			t.Errorf("scrub(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestScrubIgnoresTinyLiterals(t *testing.T) {
	// An empty or tiny secret (an unset variable) must not shred every word.
	sc := NewScrubber("", "a")
	if got := sc.Text("a plain message"); got != "a plain message" {
		t.Fatalf("got %q", got)
	}
}

// The shortest text each rule rewrites is still rewritten: the check that
// lets short texts skip the rules (mayMatchRules) never skips a match.
func TestScrubShortestMatches(t *testing.T) {
	var nilScrubber *Scrubber
	cases := []struct{ in, want string }{
		{"a://b@", "a://"},
		{"packs/increments/x", "<pack>"},
		{"probe/x", "<probe>"},
		{"AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPL"}, // 19 bytes: not a key ID
		{"AKIAIOSFODNN7EXAMPLE", "<access-key>"},
		{"0123456789abcdef0123456789abcdef01234567", "<id>"},
		{"module", "module"},
	}
	for _, c := range cases {
		if got := nilScrubber.Text(c.in); got != c.want {
			t.Errorf("scrub(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
