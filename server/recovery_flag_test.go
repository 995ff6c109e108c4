package server

import (
	"os"
	"testing"
)

// The recovery flag survives being set and cleared around every rewrite
// (its file is kept and rewritten in place), reads a flag v1 left behind,
// and takes an unreadable file for a set flag.
func TestRecoveryFlagStates(t *testing.T) {
	d := dirState{path: t.TempDir()}
	long := recoveryFlag{Op: "commit", Stage: "rewrite", RemoteAccepted: "yes", Generation: 1 << 40}
	short := recoveryFlag{Op: "pull", Stage: "rewrite", RemoteAccepted: "no", Generation: 7}
	for _, f := range []recoveryFlag{long, short, long} {
		if err := d.setRecovery(f); err != nil {
			t.Fatal(err)
		}
		if got, err := d.loadRecovery(); err != nil || got == nil || *got != f {
			t.Fatalf("flag %+v, want %+v (%v)", got, f, err)
		}
		if err := d.clearRecovery(); err != nil {
			t.Fatal(err)
		}
		if got, err := d.loadRecovery(); got != nil || err != nil {
			t.Fatalf("cleared flag reads %+v %v", got, err)
		}
	}

	// v1 set the flag by writing its JSON and cleared it by removing the file.
	if err := os.WriteFile(d.file("recovery"), []byte(`{"op":"pull","stage":"rewrite","remoteAccepted":"no","generation":7}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := d.loadRecovery(); err != nil || got == nil || *got != short {
		t.Fatalf("v1 flag reads %+v %v", got, err)
	}
	if err := os.WriteFile(d.file("recovery"), []byte("{\"op\":\"pu"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := d.loadRecovery(); err != nil || got == nil || got.Stage != "unknown" {
		t.Fatalf("torn flag reads %+v %v", got, err)
	}
}
