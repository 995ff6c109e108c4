package remote_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// The golden files of format version 4 pin its bytes as docs/storage.md
// describes them: `current` and the proposal object a proposer PUTs. They
// were written once by the codec (-update creates a missing file, never
// rewrites one); from then on the encoder must reproduce them and the
// decoder must read them back to the same value, or the format broke.

// goldenV4ID is a UUIDv7 whose millisecond field grows with n.
func goldenV4ID(n int) string { return fmt.Sprintf("01936f2a-%04x-7000-8000-%012x", n, n) }

func goldenV4Head(n int) cas.ID { return cas.Sum([]byte(fmt.Sprintf("golden head %d", n))) }

const goldenV4Store = "9f86d081884c7d659a2feaa0c55ad015"

// goldenV4Small: three generations in two writes. Write 1 accepts one
// proposal on the empty notebook (no group pack); write 2 accepts two on
// generation 1, one of them built on generation 0 and so re-parented
// (a group pack), with an author that needs every escape, and declines a
// third.
func goldenV4Small(t *testing.T) *remote.ManifestV4 {
	t.Helper()
	m, _, err := remote.NextV4(nil, goldenV4Store, 1764000001500,
		[]remote.MemberV4{{Publication: goldenV4ID(1), Proposal: 0, Head: goldenV4Head(1), Time: 1764000001000, Author: "ana"}},
		remote.GroupRef{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err = remote.NextV4(m, goldenV4Store, 1764000003500, []remote.MemberV4{
		{Publication: goldenV4ID(2), Proposal: 1, Head: goldenV4Head(2), Time: 1764000002000},
		{Publication: goldenV4ID(3), Proposal: 0, Head: goldenV4Head(3), Time: 1764000003000, Author: "Zoë \"z\" \\o/\n"},
	}, remote.GroupRef{Sum: cas.Sum([]byte("golden group 2")), Size: 1234},
		[]remote.Declined{{Proposal: 1, Publication: goldenV4ID(90)}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// goldenV4Full: 300 generations in writes of 1, 2, 3 and 5 members, so
// `recent` holds a whole window (256 IDs) and older increments are in
// segments; some writes decline a version; then an active checkpoint,
// two retained ones and three rollups, as registered descriptors would
// add them. Its segments are returned too: their BLAKE3 is pinned by the
// descriptors in `current`.
func goldenV4Full(t *testing.T) (*remote.ManifestV4, map[string][]byte) {
	t.Helper()
	var m *remote.ManifestV4
	segs := map[string][]byte{}
	sizes := []int{1, 2, 3, 5}
	n := 0
	for w := 0; n < 300; w++ {
		var c uint64
		if m != nil {
			c = m.Generation
		}
		var mbs []remote.MemberV4
		for j := 0; j < sizes[w%len(sizes)] && n < 300; j++ {
			n++
			mb := remote.MemberV4{Publication: goldenV4ID(n), Proposal: c - min(c, uint64(j)), Head: goldenV4Head(n), Time: 1764000000000 + uint64(n)*1000}
			if n%4 == 0 {
				mb.Author = fmt.Sprintf("agent-%d", n%7)
			}
			mbs = append(mbs, mb)
		}
		var group remote.GroupRef
		if len(mbs) > 1 {
			group = remote.GroupRef{Sum: cas.Sum([]byte(fmt.Sprintf("golden group %d", w))), Size: int64(100 * len(mbs))}
		}
		var declined []remote.Declined
		if w%7 == 3 {
			declined = []remote.Declined{{Proposal: c - min(c, 2), Publication: goldenV4ID(1000 + w)}}
		}
		next, ups, err := remote.NextV4(m, goldenV4Store, 1764000000000+uint64(n)*1000+500, mbs, group, declined)
		if err != nil {
			t.Fatalf("write %d: %v", w, err)
		}
		for _, u := range ups {
			segs[u.Key] = u.Data
		}
		m = next
	}
	for i, through := range []uint64{200, 120, 40} {
		pub := goldenV4ID(2000 + i)
		cp := remote.Checkpoint{Head: goldenV4Head(int(through)), Through: through, Publication: pub,
			Pack: remote.PackRef{Key: remote.CheckpointKey(through, pub), Sum: cas.Sum([]byte(fmt.Sprintf("golden checkpoint %d", through))), Size: int64(through) * 1000}}
		if i == 0 {
			m.Checkpoint = cp
		} else {
			m.Checkpoints = append(m.Checkpoints, cp)
		}
	}
	for _, r := range []struct {
		level int
		first uint64
	}{{8, 1}, {5, 257}, {3, 289}} {
		m.Rollups = append(m.Rollups, remote.RollupRef{Level: r.level, First: r.first,
			Sum: cas.Sum([]byte(fmt.Sprintf("golden rollup %d-%d", r.level, r.first))), Size: 4096 << r.level})
	}
	return m, segs
}

// checkGolden creates path from enc when -update is given and it is
// missing, then requires enc to be its bytes.
func checkGolden(t *testing.T, path string, enc []byte) []byte {
	t.Helper()
	if *update {
		if err := writeOnce(path, enc); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(enc, golden) {
		t.Fatalf("encoding changed: a format-4 break.\ngot:  %s\nwant: %s", enc, golden)
	}
	return golden
}

func TestManifestV4Golden(t *testing.T) {
	full, segs := goldenV4Full(t)
	for _, tc := range []struct {
		file string
		m    *remote.ManifestV4
	}{
		{"current-v4-small.json", goldenV4Small(t)},
		{"current-v4-full.json", full},
	} {
		t.Run(tc.file, func(t *testing.T) {
			enc, err := remote.EncodeManifestV4(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			golden := checkGolden(t, filepath.Join("testdata", tc.file), enc)
			dec, err := remote.DecodeManifestV4(golden)
			if err != nil {
				t.Fatalf("DecodeManifestV4(golden): %v", err)
			}
			if !reflect.DeepEqual(dec, tc.m) {
				t.Fatalf("decoded golden differs:\n got %+v\nwant %+v", dec, tc.m)
			}
			again, err := remote.EncodeManifestV4(dec)
			if err != nil || !bytes.Equal(again, golden) {
				t.Fatalf("decode then encode does not give the golden bytes back (%v)", err)
			}
			if remote.ManifestVersionOf(golden) != remote.ManifestV4Version {
				t.Fatalf("ManifestVersionOf(golden) = %d", remote.ManifestVersionOf(golden))
			}
			// A binary of format 3 or older runs DecodeManifest: it must
			// refuse version 4 as newer than it reads, saying which
			// version it met, never read it as an older one.
			_, err = remote.DecodeManifest(golden)
			if !errors.Is(err, remote.ErrFormatNewer) || !strings.Contains(err.Error(), "format version 4 is not supported") {
				t.Fatalf("the version 1–3 decoder on version 4: %v", err)
			}
		})
	}
	// The version-4 decoder refuses every older `current` by its version:
	// a store of format 3 or older is upgraded, never read as version 4.
	for _, old := range []string{"current-v1-linear.json", "current-v2-upgraded.json", "current-v3-carried.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", old))
		if err != nil {
			t.Fatal(err)
		}
		v := remote.ManifestVersionOf(data)
		_, err = remote.DecodeManifestV4(data)
		if v < 1 || v > 3 || !errors.Is(err, remote.ErrCorruptManifest) || !strings.Contains(err.Error(), fmt.Sprintf("version %d is not version 4", v)) {
			t.Fatalf("%s (version %d): %v", old, v, err)
		}
	}
	// The full window: 256 IDs, the newest generation's last.
	if len(full.Recent) != remote.RecentWindow || full.Recent[len(full.Recent)-1] != goldenV4ID(300) || full.AcceptedAt(goldenV4ID(45)) != 45 {
		t.Fatalf("recent: %d IDs, first accepted at %d", len(full.Recent), full.RecentFirst())
	}
	if len(full.Segments) == 0 || len(full.Declined) == 0 {
		t.Fatalf("the full fixture lists %d segments, %d declined", len(full.Segments), len(full.Declined))
	}
	// Each segment it lists is the version-4 segment its fold returned.
	for _, s := range full.Segments {
		seg, err := remote.DecodeSegmentV4(s, segs[s.Key()])
		if err != nil {
			t.Fatalf("segment %s: %v", s.Key(), err)
		}
		if !bytes.HasPrefix(segs[s.Key()], []byte(`{"version":4,"level":`)) || seg.Level != s.Level {
			t.Fatalf("segment %s: %.40s", s.Key(), segs[s.Key()])
		}
	}
}

// goldenProposals: the first proposal of a notebook (built on generation 0,
// whose pack is the pack test vector of docs/format.md: its commit is
// that vector's), and one built on the generation that accepted it, with
// an author, whose pack holds what its head adds.
func goldenProposals(t *testing.T) []struct {
	file string
	d    remote.ProposalV4
	pack []byte
} {
	t.Helper()
	first, err := os.ReadFile(filepath.Join("..", "cas", "testdata", "v1", "small.pack"))
	if err != nil {
		t.Fatal(err)
	}
	firstHead, err := cas.ParseID("1013042562646073728dccb4fb7d80033a5d0bc53282ca3231d7a86a578a3ab5")
	if err != nil {
		t.Fatal(err)
	}
	notes, err := cas.ParseID("81fd03ff856d58480fc9248979a194e13b3a8853a84157623c8425555750f192")
	if err != nil {
		t.Fatal(err)
	}
	// The second commit adds readme.md beside notes/.
	const secondID = "01890a5e-1c20-7000-8000-000000000002"
	file, err := cas.EncodeFile(cas.File{Size: 3, Inline: []byte("hi\n")})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := cas.EncodeTree([]cas.TreeEntry{{Name: "notes", Kind: cas.KindTree, ID: notes}, {Name: "readme.md", Kind: cas.KindFile, ID: file.ID}})
	if err != nil {
		t.Fatal(err)
	}
	commit := cas.EncodeCommit(cas.Commit{Tree: tree.ID, Parent: firstHead, Publication: secondID,
		Time: time.Unix(1767323100, 0), Message: []byte("second")})
	w := cas.NewPackWriter()
	for _, o := range []cas.Object{file, tree, commit} {
		if err := w.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	second, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		file string
		d    remote.ProposalV4
		pack []byte
	}{
		{"proposal-v4-first", remote.ProposalV4{Publication: "01890a5d-ac96-774b-bcce-b302099a8057", Parent: 0, Head: firstHead, Time: 1767323045000}, first},
		{"proposal-v4-author", remote.ProposalV4{Publication: secondID, Parent: 1, ParentHead: firstHead, Head: commit.ID, Time: 1767323100000, Author: "Zoë \"z\" \\o/"}, second},
	}
}

func TestProposalV4Golden(t *testing.T) {
	for _, tc := range goldenProposals(t) {
		t.Run(tc.file, func(t *testing.T) {
			enc, err := remote.EncodeProposalV4(tc.d, tc.pack)
			if err != nil {
				t.Fatal(err)
			}
			golden := checkGolden(t, filepath.Join("testdata", tc.file), enc)
			key := tc.d.Key()
			d, pack, err := remote.DecodeProposalV4(key, golden)
			if err != nil {
				t.Fatalf("DecodeProposalV4(golden): %v", err)
			}
			want := tc.d
			want.Sum, want.Size = cas.Sum(tc.pack), int64(len(tc.pack))
			if d != want || !bytes.Equal(pack, tc.pack) {
				t.Fatalf("decoded %+v, want %+v", d, want)
			}
			again, err := remote.EncodeProposalV4(d, pack)
			if err != nil || !bytes.Equal(again, golden) {
				t.Fatalf("decode then encode does not give the golden bytes back (%v)", err)
			}
			// The pack is a format-1 pack holding the head commit, built
			// on the parent's head under the proposal's own ID.
			p, err := cas.OpenPack(pack)
			if err != nil {
				t.Fatal(err)
			}
			o, err := p.Get(d.Head)
			if err != nil {
				t.Fatal(err)
			}
			c, err := cas.DecodeCommit(o)
			if err != nil || c.Parent != d.ParentHead || c.Publication != d.Publication {
				t.Fatalf("head commit %+v (%v)", c, err)
			}
			// A version-3 binary's registration decoder refuses it: the two
			// protocols never fold each other's proposals.
			if _, _, err := remote.DecodeRegistration(key, golden); err == nil {
				t.Fatal("the version-3 registration decoder read a version-4 proposal")
			}
		})
	}
}

// A version-3 registration left under proposals/ by a store's upgrade has
// a proposal key too; a version-4 reader tells it apart by its first line
// and skips it (ErrForeignProposal), never reports it as damage.
func TestProposalV4SkipsVersion3Registration(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "proposal-descriptor-only"))
	if err != nil {
		t.Fatal(err)
	}
	key := remote.ProposalKey(41, "01936f2a-0000-7000-8000-000000000042")
	if _, _, err := remote.DecodeRegistration(key, old); err != nil {
		t.Fatalf("the fixture is not a version-3 registration: %v", err)
	}
	_, _, err = remote.DecodeProposalV4(key, old)
	if !errors.Is(err, remote.ErrForeignProposal) || errors.Is(err, remote.ErrIntegrity) {
		t.Fatalf("DecodeProposalV4(version-3 registration): %v", err)
	}
}

// The document's encoder: docs/storage.md §3C written out with fmt,
// hex and base64 and nothing of the codec, so that a change to either
// the codec or the document that the other does not follow fails
// TestManifestV4FollowsTheDocument.

func docID(id cas.ID) string { return `"` + hex.EncodeToString(id[:]) + `"` }

// docAuthor: `"` and `\` escaped by a backslash, bytes below 0x20 as
// \u00xx in lowercase hex, everything else as it is.
func docAuthor(a string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(a); i++ {
		switch c := a[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// docRecent: each UUID's 16 bytes in unpadded base64url, concatenated.
func docRecent(t *testing.T, ids []string) string {
	var b strings.Builder
	for _, id := range ids {
		raw, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
		if err != nil || len(raw) != 16 {
			t.Fatalf("recent ID %q", id)
		}
		b.WriteString(base64.RawURLEncoding.EncodeToString(raw))
	}
	return b.String()
}

func docCheckpoint(c remote.Checkpoint) string {
	return fmt.Sprintf(`{"key":"%s","blake3":%s,"size":%d,"head":%s,"through":%d,"publication":"%s"}`,
		c.Pack.Key, docID(c.Pack.Sum), c.Pack.Size, docID(c.Head), c.Through, c.Publication)
}

func docSegments(segs []remote.SegmentRef) string {
	var parts []string
	for _, s := range segs {
		x := fmt.Sprintf(`{"level":%d,"first":%d,"last":%d,"time":%d,"blake3":%s,"size":%d`, s.Level, s.First, s.Last, s.Time, docID(s.Sum), s.Size)
		if s.Carrier != 0 {
			x += fmt.Sprintf(`,"carrier":%d,"publication":"%s"`, s.Carrier, s.CarrierPub)
		}
		parts = append(parts, x+"}")
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func docIncrements(incs []remote.IncrementV4) string {
	var parts []string
	for _, i := range incs {
		x := fmt.Sprintf(`{"generation":%d,"publication":"%s","parent":%s,"head":%s,"time":%d,"proposal":%d`,
			i.Generation, i.Publication, docID(i.Parent), docID(i.Head), i.Time, i.Proposal)
		if i.Author != "" {
			x += `,"author":` + docAuthor(i.Author)
		}
		if i.Group != (remote.GroupRef{}) {
			x += fmt.Sprintf(`,"group":{"blake3":%s,"size":%d}`, docID(i.Group.Sum), i.Group.Size)
		}
		parts = append(parts, x+"}")
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func docCurrentV4(t *testing.T, m *remote.ManifestV4) []byte {
	var cps, decl, rolls []string
	for _, c := range m.Checkpoints {
		cps = append(cps, docCheckpoint(c))
	}
	for _, d := range m.Declined {
		decl = append(decl, fmt.Sprintf(`{"proposal":%d,"publication":"%s","by":%d}`, d.Proposal, d.Publication, d.By))
	}
	for _, r := range m.Rollups {
		rolls = append(rolls, fmt.Sprintf(`{"level":%d,"first":%d,"blake3":%s,"size":%d}`, r.Level, r.First, docID(r.Sum), r.Size))
	}
	return []byte(fmt.Sprintf(`{"version":4,"generation":%d,"head":%s,"time":%d,"store":"%s","upgraded":%d,`+
		`"checkpoint":%s,"checkpoints":[%s],"segments":%s,"increments":%s,"recent":"%s","declined":[%s],"rollups":[%s]}`+"\n",
		m.Generation, docID(m.Head), m.Time, m.Store, m.Upgraded,
		docCheckpoint(m.Checkpoint), strings.Join(cps, ","), docSegments(m.Segments), docIncrements(m.Increments),
		docRecent(t, m.Recent), strings.Join(decl, ","), strings.Join(rolls, ",")))
}

func docSegmentV4(s *remote.SegmentV4) []byte {
	return []byte(fmt.Sprintf(`{"version":4,"level":%d,"first":%d,"last":%d,"increments":%s,"segments":%s}`+"\n",
		s.Level, s.First, s.Last, docIncrements(s.Increments), docSegments(s.Segments)))
}

func docProposalV4(d remote.ProposalV4, pack []byte) []byte {
	line := fmt.Sprintf(`{"version":4,"publication":"%s","parent":%d,"parentHead":%s,"head":%s,"time":%d`,
		d.Publication, d.Parent, docID(d.ParentHead), docID(d.Head), d.Time)
	if d.Author != "" {
		line += `,"author":` + docAuthor(d.Author)
	}
	sum := cas.Sum(pack)
	line += fmt.Sprintf(`,"blake3":%s,"size":%d}`+"\n", docID(sum), len(pack))
	return append([]byte(line), pack...)
}

func TestManifestV4FollowsTheDocument(t *testing.T) {
	full, segs := goldenV4Full(t)
	for file, m := range map[string]*remote.ManifestV4{"current-v4-small.json": goldenV4Small(t), "current-v4-full.json": full} {
		golden, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if doc := docCurrentV4(t, m); !bytes.Equal(doc, golden) {
			t.Errorf("%s: the document's encoding differs from the codec's:\ndoc:   %s\ncodec: %s", file, doc, golden)
		}
	}
	// Every segment the folds wrote, those merged into higher levels since
	// included.
	levels := map[int]int{}
	for key, data := range segs {
		level, first, last, sum, err := remote.ParseSegmentKey(key)
		if err != nil {
			t.Fatal(err)
		}
		seg, err := remote.DecodeSegmentV4(remote.SegmentRef{Level: level, First: first, Last: last, Sum: sum, Size: int64(len(data))}, data)
		if err != nil {
			t.Fatal(err)
		}
		if doc := docSegmentV4(seg); !bytes.Equal(doc, data) {
			t.Errorf("segment %s: the document's encoding differs:\ndoc:   %s\ncodec: %s", key, doc, data)
		}
		levels[level]++
	}
	if levels[1] == 0 || levels[2] == 0 {
		t.Fatalf("segments per level: %v", levels)
	}
	for _, tc := range goldenProposals(t) {
		golden, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if doc := docProposalV4(tc.d, tc.pack); !bytes.Equal(doc, golden) {
			t.Errorf("%s: the document's encoding differs from the codec's", tc.file)
		}
	}
	// The document's example of one ID in `recent`.
	if got := docRecent(t, []string{"01936f2a-0001-7000-8000-000000000001"}); got != "AZNvKgABcACAAAAAAAAAAQ" {
		t.Errorf("recent of the example ID: %s", got)
	}
}
