package remote

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

func v4id(n int) string {
	return fmt.Sprintf("0190a000-%04x-7abc-8def-%012x", n&0xffff, n)
}

func v4head(n int) cas.ID { return cas.Sum([]byte(fmt.Sprintf("head %d", n))) }

const v4store = "0123456789abcdef0123456789abcdef"

// buildV4 accepts n members, groups of size group each, from the empty
// notebook; every third member has an author, every group of more than
// one a group pack.
func buildV4(t testing.TB, n, group int) (*ManifestV4, []SegmentUpload) {
	t.Helper()
	var m *ManifestV4
	var ups []SegmentUpload
	for i := 0; i < n; {
		var mbs []MemberV4
		for j := 0; j < group && i < n; j++ {
			i++
			author := ""
			if i%3 == 0 {
				author = fmt.Sprintf("agent \"%d\" ✓\n", i)
			}
			var parent uint64
			if m != nil {
				parent = m.Generation
			}
			mbs = append(mbs, MemberV4{Publication: v4id(i), Proposal: parent, Head: v4head(i), Time: uint64(1000 + i), Author: author})
		}
		var g GroupRef
		if len(mbs) > 1 {
			g = GroupRef{Sum: cas.Sum([]byte{byte(i)}), Size: 100}
		}
		var declined []Declined
		if i%5 == 0 && m != nil {
			declined = []Declined{{Proposal: m.Generation, Publication: v4id(100000 + i)}}
		}
		next, up, err := NextV4(m, v4store, uint64(2000+i), mbs, g, declined)
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		m = next
		ups = append(ups, up...)
	}
	return m, ups
}

func TestManifestV4RoundTrip(t *testing.T) {
	for _, tc := range []struct{ n, group int }{{1, 1}, {7, 3}, {40, 1}, {300, 4}, {2000, 7}} {
		m, ups := buildV4(t, tc.n, tc.group)
		b, err := EncodeManifestV4(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeManifestV4(b)
		if err != nil {
			t.Fatalf("%d members: %v\n%s", tc.n, err, b)
		}
		again, _ := EncodeManifestV4(got)
		if !bytes.Equal(again, b) {
			t.Fatalf("%d members: re-encoding differs", tc.n)
		}
		if m.Generation != uint64(tc.n) || uint64(len(m.Recent)) != min(uint64(tc.n), RecentWindow) {
			t.Fatalf("%d members: generation %d, %d recent", tc.n, m.Generation, len(m.Recent))
		}
		// Every member at its own generation, named by recent.
		for i := max(1, tc.n-RecentWindow+1); i <= tc.n; i++ {
			if g := got.AcceptedAt(v4id(i)); g != uint64(i) {
				t.Fatalf("member %d accepted at %d", i, g)
			}
		}
		// Every segment listed was returned for upload and decodes.
		byKey := map[string][]byte{}
		for _, u := range ups {
			byKey[u.Key] = u.Data
		}
		for _, s := range got.Segments {
			seg, err := DecodeSegmentV4(s, byKey[s.Key()])
			if err != nil {
				t.Fatalf("segment %s: %v", s.Key(), err)
			}
			if seg.First != s.First {
				t.Fatal("segment range")
			}
		}
		if tc.n > MaxTail && len(got.Segments) == 0 {
			t.Fatal("no segments folded")
		}
	}
}

func TestManifestV4Encoding(t *testing.T) {
	m, _ := buildV4(t, 3, 3)
	b, _ := EncodeManifestV4(m)
	s := string(b)
	for _, want := range []string{
		`{"version":4,"generation":3,"head":"`,
		`,"store":"` + v4store + `","upgraded":1,"checkpoint":{"key":"",`,
		`"proposal":0,"author":"agent \"3\" ✓\u000a","group":{"blake3":"`,
		`,"recent":"AZCgAAABeryN7wAAAAAAAQ`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("encoding lacks %s:\n%s", want, s)
		}
	}
	if !strings.HasSuffix(s, `,"declined":[],"rollups":[]}`+"\n") {
		t.Errorf("encoding ends %q", s[len(s)-40:])
	}
}

// The size of `current` at a full window: 100,000 generations (written
// in groups of 128 to keep the test fast: the segments are what that many
// generations need, whatever the groups), 256
// recent IDs, every member with an author of 40 bytes, 16 declined
// versions, 20 rollups, 3 retained checkpoints.
func TestManifestV4Size(t *testing.T) {
	m, _ := buildV4(t, 100000, 128)
	for i := range m.Increments {
		m.Increments[i].Author = strings.Repeat("a", 40)
	}
	for i := 0; i < 16; i++ {
		m.Declined = append(m.Declined, Declined{Proposal: m.Generation - 20, Publication: v4id(200000 + i), By: m.Generation - 10})
	}
	m.Declined = m.Declined[len(m.Declined)-16:]
	// Two or three blocks per level, largest first (their order).
	for i := 0; i < 20; i++ {
		level := MaxRollupLevel - i*(MaxRollupLevel-MinRollupLevel+1)/20
		m.Rollups = append(m.Rollups, RollupRef{Level: level, First: uint64(1 + (40+i)<<level), Sum: v4head(i), Size: 1 << 20})
	}
	for i := 0; i < 4; i++ {
		cp := Checkpoint{Head: v4head(9000 + i), Through: uint64(90000 - i*1000), Publication: v4id(300000 + i)}
		cp.Pack = PackRef{Key: CheckpointKey(cp.Through, cp.Publication), Sum: v4head(i), Size: 1 << 20}
		if i == 0 {
			m.Checkpoint = cp
		} else {
			m.Checkpoints = append(m.Checkpoints, cp)
		}
	}
	b, err := EncodeManifestV4(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("version-4 current at 100,000 generations, full window: %d bytes (%d segments, %d increments, recent %d bytes)",
		len(b), len(m.Segments), len(m.Increments), len(m.Recent)*recentIDLen)
	if len(b) > 16<<10 {
		t.Fatalf("%d bytes, more than 16 KiB", len(b))
	}
	if _, err := DecodeManifestV4(b); err != nil {
		t.Fatal(err)
	}
}

func TestManifestV4Rejects(t *testing.T) {
	m, _ := buildV4(t, 20, 2)
	good, _ := EncodeManifestV4(m)
	s := string(good)
	inc := m.Increments[len(m.Increments)-1]
	cases := map[string]string{
		"version 3":          strings.Replace(s, `{"version":4,`, `{"version":3,`, 1),
		"version 5":          strings.Replace(s, `{"version":4,`, `{"version":5,`, 1),
		"unknown field":      strings.Replace(s, `{"version":4,`, `{"version":4,"x":1,`, 1),
		"duplicate field":    strings.Replace(s, `,"upgraded":1`, `,"upgraded":1,"upgraded":1`, 1),
		"missing field":      strings.Replace(s, `,"rollups":[]`, ``, 1),
		"trailing data":      s + "{}",
		"empty author":       strings.Replace(s, `"proposal":18,`, `"proposal":18,"author":"",`, 1),
		"escaped letter":     strings.Replace(s, `agent`, `\u0061gent`, 1),
		"raw newline":        strings.Replace(s, `\u000a`, "\n", 1),
		"recent short":       strings.Replace(s, `,"recent":"`, `,"recent":"A`, 1),
		"recent one missing": strings.Replace(s, `,"recent":"`+string(encodeRecent(nil, m.Recent[:1])), `,"recent":"`, 1),
		"generation skips":   strings.Replace(s, fmt.Sprintf(`{"generation":%d,`, inc.Generation), fmt.Sprintf(`{"generation":%d,`, inc.Generation+1), 1),
		"store":              strings.Replace(s, v4store, "x"+v4store[1:], 1),
		"proposal not older": strings.Replace(s, fmt.Sprintf(`"proposal":%d`, inc.Proposal), fmt.Sprintf(`"proposal":%d`, inc.Generation), 1),
		"leading zero":       strings.Replace(s, `"upgraded":1`, `"upgraded":01`, 1),
	}
	for name, bad := range cases {
		if bad == s {
			t.Errorf("%s: the case changed nothing", name)
			continue
		}
		if _, err := DecodeManifestV4([]byte(bad)); !errors.Is(err, ErrCorruptManifest) {
			t.Errorf("%s: decoded (%v)", name, err)
		}
	}
	// An older binary's decoder refuses version 4 by naming it.
	_, err := DecodeManifest(good)
	if err == nil || !strings.Contains(err.Error(), "version 4") {
		t.Errorf("the version-1..3 decoder: %v", err)
	}
	if ManifestVersionOf(good) != 4 {
		t.Error("ManifestVersionOf")
	}
}

// Rules NextV4 keeps: declined entries leave with the window, recent
// never names an ID twice, and a write needs a member.
func TestNextV4Window(t *testing.T) {
	m, _ := buildV4(t, 10, 1)
	next, _, err := NextV4(m, v4store, 1, []MemberV4{{Publication: v4id(11), Proposal: 8, Head: v4head(11)}}, GroupRef{}, []Declined{{Proposal: 9, Publication: v4id(500)}})
	if err != nil {
		t.Fatal(err)
	}
	if !next.IsDeclined(9, v4id(500)) || next.IsDeclined(8, v4id(500)) {
		t.Fatal("declined")
	}
	if _, _, err := NextV4(next, v4store, 1, []MemberV4{{Publication: v4id(11), Proposal: 10, Head: v4head(12)}}, GroupRef{}, nil); !errors.Is(err, ErrCorruptManifest) {
		t.Fatalf("an ID accepted twice in the window: %v", err)
	}
	if _, _, err := NextV4(next, v4store, 1, nil, GroupRef{}, nil); err == nil {
		t.Fatal("a write without members")
	}
	m, _ = buildV4(t, RecentWindow+30, 1)
	for _, d := range m.Declined {
		if d.By < m.RecentFirst() {
			t.Fatalf("declined %v outside the window from %d", d, m.RecentFirst())
		}
	}
}

func TestProposalV4(t *testing.T) {
	pack := []byte("a pack's bytes")
	d := ProposalV4{Publication: v4id(1), Parent: 7, ParentHead: v4head(7), Head: v4head(8), Time: 123, Author: "Zoë \"z\""}
	b, err := EncodeProposalV4(d, pack)
	if err != nil {
		t.Fatal(err)
	}
	key := ProposalKey(7, v4id(1))
	got, gotPack, err := DecodeProposalV4(key, b)
	if err != nil {
		t.Fatal(err)
	}
	d.Sum, d.Size = cas.Sum(pack), int64(len(pack))
	if got != d || !bytes.Equal(gotPack, pack) {
		t.Fatalf("got %+v", got)
	}
	wantLine := `{"version":4,"publication":"` + v4id(1) + `","parent":7,"parentHead":"` + v4head(7).String() + `","head":"` + v4head(8).String() +
		`","time":123,"author":"Zoë \"z\"","blake3":"` + cas.Sum(pack).String() + `","size":14}` + "\n"
	if string(b[:len(b)-len(pack)]) != wantLine {
		t.Fatalf("descriptor %s", b)
	}
	for name, bad := range map[string][]byte{
		"other key":      nil,
		"pack changed":   append(bytes.Clone(b[:len(b)-1]), 'X'),
		"pack truncated": b[:len(b)-1],
		"not canonical":  bytes.Replace(b, []byte(`{"version":4,`), []byte(`{"version":4, `), 1),
	} {
		k := key
		if bad == nil {
			k, bad = ProposalKey(8, v4id(1)), b
		}
		if _, _, err := DecodeProposalV4(k, bad); !errors.Is(err, ErrCorruptProposal) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A version-3 registration at the same key form is foreign, not
	// corrupt: a version-4 folder skips it.
	v3 := EncodeRegistration(ProposalDescriptor{Publication: v4id(1), ParentGeneration: 7, Parent: v4head(7), Head: v4head(8),
		Pack: PackRef{Sum: cas.Sum(pack), Size: int64(len(pack))}}, pack)
	if _, _, err := DecodeProposalV4(key, v3); !errors.Is(err, ErrForeignProposal) || errors.Is(err, ErrCorruptProposal) {
		t.Errorf("a version-3 registration: %v", err)
	}
	// And version 3's decoder refuses a version-4 proposal.
	if _, _, err := DecodeRegistration(key, b); err == nil {
		t.Error("version 3 decoded a version-4 proposal")
	}
}

func TestProposalEntries(t *testing.T) {
	id, cut := v4id(1), v4id(2)
	for key, want := range map[string]EntryKind{
		ProposalKey(5, id):                                EntryProposal,
		FoldMarkerKey(5, id, 6, cut):                      EntryMarker,
		GroupPackKey(5, id):                               EntryOther, // version 3's group pack
		leadKey(5):                                        EntryOther, // version 3's lead marker
		"proposals/5-" + id:                               EntryOther,
		ProposalKey(5, id) + ".fold.x":                    EntryOther,
		GroupPackKeyV4(v4head(1)):                         EntryOther,
		"proposals/" + strings.Repeat("9", 20) + "-" + id: EntryOther, // beyond uint64
	} {
		kind, g, gotID, cg, cid := ParseProposalEntry(key)
		if kind != want {
			t.Errorf("%s: kind %d, want %d", key, kind, want)
			continue
		}
		if kind != EntryOther && (g != 5 || gotID != id) {
			t.Errorf("%s: %d %s", key, g, gotID)
		}
		if kind == EntryMarker && (cg != 6 || cid != cut) {
			t.Errorf("%s: cut %d %s", key, cg, cid)
		}
		if err := CheckKey(key); err != nil && kind != EntryOther {
			t.Errorf("%s: %v", key, err)
		}
	}
	if GroupPackKeyV4(v4head(1)) != "packs/groups/"+v4head(1).String()+".pack" {
		t.Error("group pack key")
	}
}

// Rules of version 2 that version 4 keeps, and the rules of its own
// fields: each broken one is refused before encoding (and so on
// decoding), each with a control that the same manifest without the
// break is accepted.
func TestManifestV4RefusesBrokenRules(t *testing.T) {
	base, _ := buildV4(t, 100, 1)
	seg := func(level int, first, last uint64) SegmentRef {
		return SegmentRef{Level: level, First: first, Last: last, Time: 1, Sum: v4head(int(first)), Size: 100}
	}
	levelOne := func(n int) []SegmentRef {
		var out []SegmentRef
		for i := 0; i < n; i++ {
			out = append(out, seg(1, uint64(8*i+1), uint64(8*i+8)))
		}
		return out
	}
	cp := func(through uint64, pub string) Checkpoint {
		return Checkpoint{Head: v4head(int(through)), Through: through, Publication: pub,
			Pack: PackRef{Key: CheckpointKey(through, pub), Sum: v4head(7), Size: 10}}
	}
	rollup := func(level int, first uint64) RollupRef {
		return RollupRef{Level: level, First: first, Sum: v4head(level), Size: 10}
	}
	for _, tc := range []struct {
		name   string
		ok     func(m *ManifestV4) // accepted
		broken func(m *ManifestV4) // refused
	}{
		{"eight segments of one level",
			func(m *ManifestV4) { m.Segments = levelOne(7) },
			func(m *ManifestV4) { m.Segments = levelOne(8) }},
		{"a carried segment at or above the upgrade",
			func(m *ManifestV4) { m.Segments = levelOne(7) },
			func(m *ManifestV4) {
				m.Segments = levelOne(7)
				m.Segments[6].Carrier, m.Segments[6].CarrierPub = 57, v4id(57)
			}},
		{"a checkpoint's publication named by the tail",
			func(m *ManifestV4) { m.Checkpoint = cp(50, v4id(9999)) },
			func(m *ManifestV4) { m.Checkpoint = cp(50, m.Increments[0].Publication) }},
		{"a checkpoint's publication named by recent",
			func(m *ManifestV4) { m.Checkpoint = cp(50, v4id(9999)) },
			func(m *ManifestV4) { m.Checkpoint = cp(50, m.Recent[0]) }},
		{"a version declined twice",
			func(m *ManifestV4) {
				m.Declined = []Declined{{Proposal: 90, Publication: v4id(5000), By: 95}, {Proposal: 91, Publication: v4id(5000), By: 96}}
			},
			func(m *ManifestV4) {
				m.Declined = []Declined{{Proposal: 90, Publication: v4id(5000), By: 95}, {Proposal: 90, Publication: v4id(5000), By: 96}}
			}},
		{"a rollup of level 1",
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(2, 1)} },
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(1, 1)} }},
		{"a rollup above level 10",
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(6, 1)} },
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(11, 1)} }},
		{"a rollup off its block boundary",
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(3, 9)} },
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(3, 5)} }},
		{"a rollup whose block ends after generation",
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(2, 97)} },
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(3, 97)} }},
		{"rollups out of order",
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(6, 1), rollup(3, 65), rollup(3, 73)} },
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(3, 65), rollup(6, 1)} }},
		{"a rollup's block twice",
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(3, 65), rollup(3, 73)} },
			func(m *ManifestV4) { m.Rollups = []RollupRef{rollup(3, 65), rollup(3, 65)} }},
	} {
		for i, mutate := range []func(*ManifestV4){tc.ok, tc.broken} {
			m := *base
			m.Segments, m.Declined, m.Rollups = nil, nil, nil
			mutate(&m)
			_, err := EncodeManifestV4(&m)
			if i == 0 && err != nil {
				t.Errorf("%s: the control is refused: %v", tc.name, err)
			}
			if i == 1 && !errors.Is(err, ErrCorruptManifest) {
				t.Errorf("%s: accepted (%v)", tc.name, err)
			}
		}
	}
	if k := rollup(3, 9).Key(); k != "packs/rollups/"+v4head(3).String()+".pack" {
		t.Errorf("rollup key %s", k)
	}
}

// A version-4 `current` has one encoding: the decoder refuses the same
// fields in another order or with whitespace, so ManifestVersionOf (the
// version field first) is exact for version 4, and DecodeCurrent reports
// a reordered one as damage, not as a newer format.
func TestManifestV4IsCanonicalOnly(t *testing.T) {
	m, _ := buildV4(t, 20, 2)
	good, _ := EncodeManifestV4(m)
	s := string(good)
	head := `,"head":"` + m.Head.String() + `"`
	reordered := strings.Replace(strings.Replace(s, head, "", 1), `{"version":4,`, `{"version":4`+head+`,`, 1)
	moved := `{"generation":` + strings.Replace(strings.TrimPrefix(s, `{"version":4,"generation":`), `,"head":`, `,"version":4,"head":`, 1)
	for name, bad := range map[string]string{
		"head before generation": reordered,
		"version not first":      moved,
		"a space":                strings.Replace(s, `,"time":`, `, "time":`, 1),
		"no trailing newline":    strings.TrimSuffix(s, "\n"),
		"a leading zero":         strings.Replace(s, `,"time":`, `,"time":0`, 1),
		"an escaped letter":      strings.Replace(s, `,"store":"`, `,"store":"\u0030`, 1),
		"upper-case hex":         strings.Replace(s, head, strings.ToUpper(head), 1),
	} {
		if bad == s {
			t.Fatalf("%s: the case changed nothing", name)
		}
		if _, err := DecodeManifestV4([]byte(bad)); !errors.Is(err, ErrCorruptManifest) {
			t.Errorf("%s: DecodeManifestV4: %v", name, err)
		}
		if _, _, err := DecodeCurrent([]byte(bad)); !errors.Is(err, ErrCorruptManifest) || errors.Is(err, ErrFormatNewer) {
			t.Errorf("%s: DecodeCurrent: %v", name, err)
		}
	}
	if ManifestVersionOf([]byte(moved)) != 0 || ManifestVersionOf(good) != 4 {
		t.Error("ManifestVersionOf")
	}
	if v4, old, err := DecodeCurrent(good); err != nil || v4 == nil || old != nil {
		t.Fatalf("DecodeCurrent: %v", err)
	}
	var fv *FormatVersionError
	if _, _, err := DecodeCurrent([]byte(strings.Replace(moved, `"version":4`, `"version":5`, 1))); !errors.As(err, &fv) || fv.Version != 5 || fv.Newest != 4 {
		t.Errorf("version 5: %v", err)
	}
}

// After an upgrade a fold may merge version-3 segments (carried ones
// too) with version-4 ones into a version-4 segment of the next level;
// a version-3 checkpoint swap may leave a generation between them. Such
// a segment decodes; children that overlap, or a carried descriptor for
// the version-4 segment itself, do not.
func TestSegmentV4OverVersion3Children(t *testing.T) {
	carried := SegmentRef{Level: 1, First: 1, Last: 8, Time: 1, Sum: v4head(1), Size: 100, Carrier: 9, CarrierPub: v4id(9)}
	own := SegmentRef{Level: 1, First: 10, Last: 17, Time: 2, Sum: v4head(2), Size: 100}
	ref, data := encodeSegmentV4(2, nil, []SegmentRef{carried, own})
	s, err := DecodeSegmentV4(ref, data)
	if err != nil || len(s.Segments) != 2 || s.Segments[0] != carried {
		t.Fatalf("a version-4 segment over a carried version-3 child: %v", err)
	}
	over := own
	over.First = 8
	ref, data = encodeSegmentV4(2, nil, []SegmentRef{carried, over})
	if _, err := DecodeSegmentV4(ref, data); !errors.Is(err, ErrCorruptPack) {
		t.Fatalf("overlapping children: %v", err)
	}
	ref, data = encodeSegmentV4(2, nil, []SegmentRef{carried, own})
	ref.Carrier, ref.CarrierPub = 20, v4id(20)
	if _, err := DecodeSegmentV4(ref, data); !errors.Is(err, ErrCorruptPack) {
		t.Fatalf("a carried version-4 segment: %v", err)
	}
}

// The canonical check reuses its buffer from call to call: manifests of
// different sizes decoded in turn each still compare against their own
// bytes, and a manifest that differs from the one before only after the
// first's length is still refused.
func TestManifestV4CanonicalCheckBetweenCalls(t *testing.T) {
	small, _ := buildV4(t, 3, 1)
	big, _ := buildV4(t, 300, 2)
	smallB, _ := EncodeManifestV4(small)
	bigB, _ := EncodeManifestV4(big)
	for i, data := range [][]byte{bigB, smallB, bigB, smallB} {
		m, err := DecodeManifestV4(data)
		if err != nil {
			t.Fatalf("decode %d: %v", i, err)
		}
		if again, _ := EncodeManifestV4(m); !bytes.Equal(again, data) {
			t.Fatalf("decode %d: another manifest", i)
		}
		if len(m.Recent) > 0 && !IsPublicationID(m.Recent[len(m.Recent)-1]) {
			t.Fatalf("decode %d: recent %q", i, m.Recent[len(m.Recent)-1])
		}
	}
	bad := append(bytes.TrimSuffix(bytes.Clone(smallB), []byte("\n")), " \n"...)
	for i := range 2 {
		if _, err := DecodeManifestV4(bigB); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeManifestV4(bad); !errors.Is(err, ErrCorruptManifest) {
			t.Fatalf("round %d: a space before the newline: %v", i, err)
		}
	}
}

// decodeRecent takes an ID exactly when its text is a publication ID:
// the raw bytes' version and variant decide it, as IsPublicationID
// decides it on the text.
func TestDecodeRecentTakesPublicationIDsOnly(t *testing.T) {
	var raw [16]byte
	var text [uuidLen]byte
	for i := range 4096 {
		for j := range raw {
			raw[j] = byte(i*131 + j*7 + i>>3*j)
		}
		raw[6] = byte(i) // every version nibble, with each variant below
		raw[8] = byte(i >> 4)
		putUUID(text[:], raw)
		want := IsPublicationID(string(text[:]))
		got, err := decodeRecent([]byte(strictB64().EncodeToString(raw[:])))
		if (err == nil) != want || (want && (len(got) != 1 || got[0] != string(text[:]))) {
			t.Fatalf("%x: decodeRecent %v, %v; IsPublicationID %v", raw, got, err, want)
		}
	}
}
