package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// FuzzManifestDecode feeds arbitrary bytes to the `current` decoder: it must
// never panic, never accept something the encoder would not reproduce, and
// whatever it accepts must re-encode to bytes that decode to the same value
// and encode identically again (byte-stable).
func FuzzManifestDecode(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "remote", "testdata", "current-v*.json"))
	if len(seeds) == 0 {
		f.Fatal("no seed manifests in remote/testdata")
	}
	for _, path := range seeds {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		s := string(data)
		f.Add([]byte(strings.Replace(s, `"version":1`, `"version":2`, 1)))
		f.Add([]byte(strings.Replace(s, `"version":3`, `"version":2`, 1)))
		f.Add([]byte(strings.Replace(s, `"generation":`, `"generation":null,"x":`, 1)))
		f.Add([]byte(s[:len(s)/2]))
		f.Add([]byte(strings.ReplaceAll(s, ",", ",\n  ")))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"version":1,"generation":1,"version":1}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := remote.DecodeManifest(data)
		if err != nil {
			if m != nil {
				t.Fatal("DecodeManifest returned a manifest with an error")
			}
			return
		}
		enc, err := remote.EncodeManifest(m)
		if err != nil {
			t.Fatalf("a decoded manifest does not encode: %v", err)
		}
		again, err := remote.DecodeManifest(enc)
		if err != nil {
			t.Fatalf("the re-encoded manifest does not decode: %v", err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatal("decode(encode(m)) != m")
		}
		enc2, err := remote.EncodeManifest(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not byte-stable: %v", err)
		}
	})
}

// FuzzSegmentDecode feeds arbitrary bytes, described by a descriptor that
// matches their size and BLAKE3, to the segment decoder: it must never
// panic, and whatever it accepts must be a segment of the described level
// and range.
func FuzzSegmentDecode(f *testing.F) {
	f.Add(1, uint64(1), uint64(2), []byte(`{"version":2,"level":1,"first":1,"last":2,"increments":[],"segments":[]}`+"\n"))
	f.Add(2, uint64(1), uint64(16), []byte(`{"version":2,"level":2,"first":1,"last":16,"increments":[],"segments":[{"level":1,"first":1,"last":16,"time":0,"blake3":"`+strings.Repeat("ab", 32)+`","size":10}]}`+"\n"))
	f.Add(1, uint64(5), uint64(5), []byte(`{"version":2,"level":1,"first":5,"last":5,"increments":[{"generation":5,"publication":"01936f2a-0000-7000-8000-000000000001","parent":"`+strings.Repeat("00", 32)+`","head":"`+strings.Repeat("11", 32)+`","time":1,"blake3":"`+strings.Repeat("22", 32)+`","size":9}],"segments":[]}`+"\n"))
	// Format 3: segments of version 3, whose children may be carried.
	f.Add(2, uint64(1), uint64(16), []byte(`{"version":3,"level":2,"first":1,"last":16,"increments":[],"segments":[{"level":1,"first":1,"last":16,"time":0,"blake3":"`+strings.Repeat("ab", 32)+`","size":10,"carrier":24,"publication":"01936f2a-0000-7000-8000-000000000001"}]}`+"\n"))
	f.Add(2, uint64(1), uint64(16), []byte(`{"version":2,"level":2,"first":1,"last":16,"increments":[],"segments":[{"level":1,"first":1,"last":16,"time":0,"blake3":"`+strings.Repeat("ab", 32)+`","size":10,"carrier":24,"publication":"01936f2a-0000-7000-8000-000000000001"}]}`+"\n"))
	// Level 0 names no segment: CI's fuzzing found it accepted with no children.
	f.Add(0, uint64(0), uint64(0), []byte(`{"version":2,"level":0,"first":0,"last":0,"increments":[],"segments":[]}`+"\n"))
	f.Fuzz(func(t *testing.T, level int, first, last uint64, data []byte) {
		// The same bytes as a segment of its own and as one carried in a
		// pack (format 3: the descriptor's checksum is the chunk's ID).
		own := remote.SegmentRef{Level: level, First: first, Last: last, Sum: cas.Sum(data), Size: int64(len(data))}
		refs := []remote.SegmentRef{own}
		if chunk, err := cas.ChunkObject(data); err == nil && last < ^uint64(0) {
			carried := own
			carried.Sum, carried.Carrier, carried.CarrierPub = chunk.ID, last+1, "01936f2a-0000-7000-8000-000000000001"
			refs = append(refs, carried)
		}
		for _, ref := range refs {
			s, err := remote.DecodeSegment(ref, data)
			if err != nil {
				if s != nil {
					t.Fatal("DecodeSegment returned a segment with an error")
				}
				continue
			}
			if s.Level != level || s.First != first || s.Last != last || (len(s.Increments) == 0) == (len(s.Segments) == 0) {
				t.Fatalf("accepted a segment that does not match its descriptor: %+v", s)
			}
			if len(s.Increments) > remote.SegmentFanout || len(s.Segments) > remote.SegmentFanout {
				t.Fatal("accepted an oversized segment")
			}
			for _, c := range s.Segments {
				if c.Carried() && (c.Carrier <= c.Last || !remote.IsPublicationID(c.CarrierPub)) {
					t.Fatalf("accepted a carried child with a bad carrier: %+v", c)
				}
			}
		}
	})
}
