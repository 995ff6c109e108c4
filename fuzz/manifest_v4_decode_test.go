package fuzz

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// v4Seed is a version-4 `current` of three generations, one with an
// author that needs escapes, one group pack and one declined version.
func v4Seed(f *testing.F) []byte {
	id := func(n byte) string {
		return "01936f2a-0000-7000-8000-0000000000" + string([]byte{'0' + n/10, '0' + n%10})
	}
	head := func(n byte) cas.ID { return cas.Sum([]byte{n}) }
	m, _, err := remote.NextV4(nil, strings.Repeat("ab", 16), 5, []remote.MemberV4{{Publication: id(1), Head: head(1), Time: 1, Author: "Zoë \"z\"\n"}}, remote.GroupRef{}, nil)
	if err == nil {
		m, _, err = remote.NextV4(m, strings.Repeat("ab", 16), 6, []remote.MemberV4{{Publication: id(2), Proposal: 1, Head: head(2)}, {Publication: id(3), Proposal: 0, Head: head(3)}},
			remote.GroupRef{Sum: head(9), Size: 10}, []remote.Declined{{Proposal: 1, Publication: id(4)}})
	}
	if err != nil {
		f.Fatal(err)
	}
	data, err := remote.EncodeManifestV4(m)
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// FuzzManifestV4Decode: the version-4 decoder never panics, and what it
// accepts re-encodes to bytes that decode to the same value and encode
// identically again.
func FuzzManifestV4Decode(f *testing.F) {
	seed := v4Seed(f)
	s := string(seed)
	f.Add(seed)
	f.Add([]byte(strings.Replace(s, `"version":4`, `"version":3`, 1)))
	f.Add([]byte(strings.Replace(s, `\"z\"`, `\u0022z\u0022`, 1)))
	f.Add([]byte(s[:len(s)/2]))
	f.Add([]byte(`{"version":4}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := remote.DecodeManifestV4(data)
		if err != nil {
			if m != nil {
				t.Fatal("a manifest with an error")
			}
			return
		}
		enc, err := remote.EncodeManifestV4(m)
		if err != nil {
			t.Fatalf("a decoded manifest does not encode: %v", err)
		}
		// Unlike versions 1–3, only the canonical bytes decode: what is
		// accepted is its own encoding, byte for byte.
		if !bytes.Equal(enc, data) {
			t.Fatal("a non-canonical encoding was accepted")
		}
		again, err := remote.DecodeManifestV4(enc)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("decode(encode(m)) != m: %v", err)
		}
		if enc2, _ := remote.EncodeManifestV4(again); !bytes.Equal(enc, enc2) {
			t.Fatal("encoding is not byte-stable")
		}
	})
}

// FuzzProposalV4Decode: the proposal decoder never panics, and what it
// accepts is canonical and matches its key.
func FuzzProposalV4Decode(f *testing.F) {
	id := "01936f2a-0000-7000-8000-000000000001"
	d := remote.ProposalV4{Publication: id, Parent: 3, ParentHead: cas.Sum([]byte{3}), Head: cas.Sum([]byte{4}), Time: 9, Author: "a\tb"}
	data, err := remote.EncodeProposalV4(d, []byte("pack"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint64(3), data)
	f.Add(uint64(3), bytes.Replace(data, []byte(`"version":4`), []byte(`"version":1`), 1))
	f.Add(uint64(2), data)
	f.Fuzz(func(t *testing.T, g uint64, data []byte) {
		key := remote.ProposalKey(g, id)
		got, pack, err := remote.DecodeProposalV4(key, data)
		if err != nil {
			return
		}
		if got.Parent != g || got.Publication != id || cas.Sum(pack) != got.Sum {
			t.Fatalf("accepted a proposal that does not match its key or pack: %+v", got)
		}
		again, err := remote.EncodeProposalV4(got, pack)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes the encoder would not write: %v", err)
		}
	})
}

// FuzzSegmentV4Decode feeds arbitrary bytes, described by a descriptor
// that matches their size and BLAKE3, to the version-4 segment decoder: it
// never panics, and what it accepts is a segment of the described level
// and range whose children follow the rules of that level.
func FuzzSegmentV4Decode(f *testing.F) {
	s := string(v4Seed(f))
	at := strings.Index(s, `"increments":`)
	incs := s[at : at+strings.Index(s[at:], `],"recent"`)+1]
	f.Add(1, uint64(1), uint64(3), []byte(`{"version":4,"level":1,"first":1,"last":3,`+incs+`,"segments":[]}`+"\n"))
	f.Add(2, uint64(1), uint64(16), []byte(`{"version":4,"level":2,"first":1,"last":16,"increments":[],"segments":[{"level":1,"first":1,"last":16,"time":0,"blake3":"`+strings.Repeat("ab", 32)+`","size":10}]}`+"\n"))
	f.Add(0, uint64(0), uint64(0), []byte(`{"version":4,"level":0,"first":0,"last":0,"increments":[],"segments":[]}`+"\n"))
	f.Fuzz(func(t *testing.T, level int, first, last uint64, data []byte) {
		ref := remote.SegmentRef{Level: level, First: first, Last: last, Sum: cas.Sum(data), Size: int64(len(data))}
		seg, err := remote.DecodeSegmentV4(ref, data)
		if err != nil {
			if seg != nil {
				t.Fatal("DecodeSegmentV4 returned a segment with an error")
			}
			return
		}
		if seg.Level != level || seg.First != first || seg.Last != last || (len(seg.Increments) == 0) == (len(seg.Segments) == 0) {
			t.Fatalf("accepted a segment that does not match its descriptor: %+v", seg)
		}
		if seg.Level < 1 || seg.Level > remote.MaxSegmentLevel {
			t.Fatalf("accepted level %d", seg.Level)
		}
		if len(seg.Increments) > remote.SegmentFanout || len(seg.Segments) > remote.SegmentFanout {
			t.Fatal("accepted an oversized segment")
		}
		for i, c := range seg.Segments {
			if c.Level != seg.Level-1 || c.First > c.Last || (i > 0 && c.First <= seg.Segments[i-1].Last) {
				t.Fatalf("accepted children out of order or of the wrong level: %+v", seg.Segments)
			}
		}
	})
}
