package remote_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// goldenRegistered are the fixtures of docs/storage.md §3C.8: a rollup
// of the level-2 block 5..8, and a checkpoint through generation 12.
func goldenRegistered() []struct {
	file string
	key  string
	r    remote.Registered
} {
	rollup := remote.Registered{Kind: remote.EntryRollup, Rollup: remote.RollupRef{Level: 2, First: 5,
		Sum: cas.Sum([]byte("golden rollup 5-8")), Size: 4321}}
	pub := goldenV4ID(0x99)
	cp := remote.Registered{Kind: remote.EntryCheckpoint, Checkpoint: remote.Checkpoint{
		Pack:    remote.PackRef{Key: remote.CheckpointKey(12, pub), Sum: cas.Sum([]byte("golden checkpoint 12")), Size: 98765},
		Head:    goldenV4Head(12),
		Through: 12, Publication: pub}}
	return []struct {
		file string
		key  string
		r    remote.Registered
	}{
		{"registered-v4-rollup", "proposals/00000000000000000008-r-", rollup},
		{"registered-v4-checkpoint", "proposals/00000000000000000012-c-", cp},
	}
}

func TestRegisteredV4Golden(t *testing.T) {
	for _, tc := range goldenRegistered() {
		t.Run(tc.file, func(t *testing.T) {
			key, enc, err := remote.EncodeRegistered(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			golden := checkGolden(t, filepath.Join("testdata", tc.file), enc)
			if want := tc.key + cas.Sum(golden).String(); key != want {
				t.Fatalf("key %s, want %s", key, want)
			}
			kind, g, sum, _, _ := remote.ParseProposalEntry(key)
			if kind != tc.r.Kind || g != tc.r.Generation() || sum != cas.Sum(golden).String() {
				t.Fatalf("ParseProposalEntry(%s) = %v %d %s", key, kind, g, sum)
			}
			r, err := remote.DecodeRegistered(key, golden)
			if err != nil || r != tc.r {
				t.Fatalf("decoded %+v (%v), want %+v", r, err, tc.r)
			}
			// A fold reading a LIST does not take it for a proposal, and a
			// version-4 proposal decoder refuses it.
			if _, _, err := remote.DecodeProposalV4(key, golden); err == nil {
				t.Fatal("a registered descriptor decoded as a proposal")
			}
		})
	}
}

func TestRegisteredV4RefusesWhatIsNotItsKey(t *testing.T) {
	tc := goldenRegistered()[0]
	key, data, err := remote.EncodeRegistered(tc.r)
	if err != nil {
		t.Fatal(err)
	}
	other := goldenRegistered()[1]
	okey, odata, _ := remote.EncodeRegistered(other.r)
	bad := map[string]struct {
		key  string
		data []byte
	}{
		"another descriptor's bytes": {key, odata},
		"whitespace":                 {"", bytes.Replace(data, []byte(`,"first"`), []byte(`, "first"`), 1)},
		"no newline":                 {"", data[:len(data)-1]},
		"another version":            {"", bytes.Replace(data, []byte(`"version":4`), []byte(`"version":5`), 1)},
		"a rollup under a checkpoint key": {
			remote.RegisteredKey(remote.EntryCheckpoint, 8, cas.Sum(data)), data},
		"another generation":       {remote.RegisteredKey(remote.EntryRollup, 12, cas.Sum(data)), data},
		"a block off its boundary": {"", bytes.Replace(data, []byte(`"first":5`), []byte(`"first":6`), 1)},
		"both kinds":               {"", bytes.Replace(odata, []byte(`{"version":4,`), append(append([]byte(`{"version":4,"rollup":`), data[len(`{"version":4,"rollup":`):len(data)-2]...), ','), 1)},
	}
	_ = okey
	for name, tc := range bad {
		k := tc.key
		if k == "" { // the bytes' own checksum: only the content is wrong
			k = remote.RegisteredKey(remote.EntryRollup, 8, cas.Sum(tc.data))
		}
		if _, err := remote.DecodeRegistered(k, tc.data); !errors.Is(err, remote.ErrCorruptRegistered) || !errors.Is(err, remote.ErrIntegrity) {
			t.Errorf("%s: %v, want ErrCorruptRegistered", name, err)
		}
	}
	// Keys that are not version 4's registrations stay "other".
	for _, k := range []string{
		"proposals/00000000000000000008-r-" + cas.Sum(data).String()[:63],
		"proposals/00000000000000000008-x-" + cas.Sum(data).String(),
		"proposals/0000000000000000000a-r-" + cas.Sum(data).String(),
		"proposals/00000000000000000008-r-" + cas.Sum(data).String() + ".fold.x",
	} {
		if kind, _, _, _, _ := remote.ParseProposalEntry(k); kind != remote.EntryOther {
			t.Errorf("%s is kind %v", k, kind)
		}
	}
}

// The fixtures again, written from docs/storage.md §3C.8 alone (fmt and
// hex, nothing of the codec), with their keys.
func TestRegisteredV4FollowsTheDocument(t *testing.T) {
	for _, tc := range goldenRegistered() {
		var line string
		if r := tc.r.Rollup; tc.r.Kind == remote.EntryRollup {
			line = fmt.Sprintf(`{"version":4,"rollup":{"level":%d,"first":%d,"blake3":"%x","size":%d}}`+"\n", r.Level, r.First, r.Sum[:], r.Size)
		} else {
			cp := tc.r.Checkpoint
			line = fmt.Sprintf(`{"version":4,"checkpoint":{"key":"packs/checkpoints/%020d-%s.pack","blake3":"%x","size":%d,"head":"%x","through":%d,"publication":"%s"}}`+"\n",
				cp.Through, cp.Publication, cp.Pack.Sum[:], cp.Pack.Size, cp.Head[:], cp.Through, cp.Publication)
		}
		golden, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if line != string(golden) {
			t.Fatalf("%s: the document gives\n%s\nthe fixture holds\n%s", tc.file, line, golden)
		}
		sum := blake3.Sum256(golden)
		key := fmt.Sprintf("%s%x", tc.key, sum[:])
		if k, _, _ := remote.EncodeRegistered(tc.r); k != key {
			t.Fatalf("%s: key %s, the document gives %s", tc.file, k, key)
		}
	}
}
