package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// FuzzManifestDecode feeds arbitrary bytes to the `current` decoder: it must
// never panic, never accept something the encoder would not reproduce, and
// whatever it accepts must re-encode to bytes that decode to the same value
// and encode identically again (byte-stable).
func FuzzManifestDecode(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "remote", "testdata", "current-v1-*.json"))
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
