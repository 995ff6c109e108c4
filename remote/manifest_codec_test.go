package remote_test

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

var update = flag.Bool("update", false, "create the golden manifests missing from testdata (an existing one is never rewritten)")

// The golden files pin the v1, v2 and v3 encodings byte for byte (v2
// files were created with -update when version 2 shipped, v3 files when
// version 3 did; never again). Buckets outlive
// releases: these files must keep decoding, and the encoder must keep
// producing them, for as long as version 1 exists.
func TestManifestGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		m    *remote.Manifest
	}{
		{"current-v1-linear.json", linearV1(3)},
		{"current-v1-checkpointed.json", checkpointed()},
		{"current-v2-linear.json", asVersion(linear(t, 3), 2)},
		{"current-v2-upgraded.json", asVersion(upgradedV2(t), 2)},
		{"current-v3-carried.json", grow(t, memstore.New(), nil, 0, 17)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			enc, err := remote.EncodeManifest(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				// Write-once: -update creates a golden file that does not
				// exist yet and never rewrites one (O_EXCL).
				if err := writeOnce(path, enc); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(enc, golden) {
				t.Fatalf("encoding changed: a v1 format break.\ngot:  %s\nwant: %s", enc, golden)
			}
			dec, err := remote.DecodeManifest(golden)
			if err != nil {
				t.Fatalf("DecodeManifest(golden): %v", err)
			}
			if !reflect.DeepEqual(dec, tc.m) {
				t.Fatalf("decoded golden differs:\n got %+v\nwant %+v", dec, tc.m)
			}
		})
	}
}

// writeOnce creates path with data; an existing file is left as it is.
func writeOnce(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// asVersion is m as a writer of version v wrote it: versions 2 and 3
// differ only by the version field while no segment is carried.
func asVersion(m *remote.Manifest, v int) *remote.Manifest {
	m.Version = v
	return m
}

func TestManifestEncodeIsStable(t *testing.T) {
	m := checkpointed()
	a, err := remote.EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := remote.DecodeManifest(a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := remote.EncodeManifest(dec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("encode(decode(encode(m))) differs from encode(m)")
	}
	// Field order and whitespace do not matter to the decoder, only to the
	// encoder: a reordered, indented manifest decodes to the same value.
	reordered := strings.Replace(string(a), `{"version":1,"generation":5,`, "{\n  \"generation\": 5,\n  \"version\": 1,\n  ", 1)
	dec2, err := remote.DecodeManifest([]byte(reordered))
	if err != nil || !reflect.DeepEqual(dec2, m) {
		t.Fatalf("reordered manifest: %v", err)
	}
}

func TestManifestDecodeStrict(t *testing.T) {
	golden, err := remote.EncodeManifest(checkpointed())
	if err != nil {
		t.Fatal(err)
	}
	g := string(golden)
	firstInc := `{"generation":4,`
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"not json", "current"},
		{"array", "[]"},
		{"null document", "null"},
		{"truncated", g[:len(g)/2]},
		{"truncated by one byte", g[:len(g)-3]},
		{"trailing data", g + "{}"},
		{"trailing garbage", g + "x"},
		{"unknown field", strings.Replace(g, `{"version":1,`, `{"version":1,"extra":0,`, 1)},
		{"unknown increment field", strings.Replace(g, firstInc, `{"note":"x","generation":4,`, 1)},
		{"duplicate field", strings.Replace(g, `{"version":1,`, `{"version":1,"version":1,`, 1)},
		{"duplicate increment field", strings.Replace(g, firstInc, `{"generation":4,"generation":4,`, 1)},
		{"missing field", strings.Replace(g, `"generation":5,`, ``, 1)},
		{"missing increment field", strings.Replace(g, firstInc, `{`, 1)},
		{"missing retained", g[:strings.Index(g, `,"retained":`)] + "}"},
		{"null generation", strings.Replace(g, `"generation":5,`, `"generation":null,`, 1)},
		{"null increments", strings.Replace(g, `"increments":[{"generation":4`, `"increments":null,"x":[{"generation":4`, 1)},
		{"null checkpoint", strings.Replace(g, `"checkpoint":{"key":"packs`, `"checkpoint":null,"y":{"key":"packs`, 1)},
		{"null head", strings.Replace(g, `"head":"`, `"head":null,"z":"`, 1)},
		{"version 2", strings.Replace(g, `"version":1`, `"version":2`, 1)},
		{"version as string", strings.Replace(g, `"version":1`, `"version":"1"`, 1)},
		{"float generation", strings.Replace(g, `"generation":5,`, `"generation":5.0,`, 1)},
		{"exponent generation", strings.Replace(g, `"generation":5,`, `"generation":5e0,`, 1)},
		{"negative generation", strings.Replace(g, `"generation":5,`, `"generation":-5,`, 1)},
		{"generation overflow", strings.Replace(g, `"generation":5,`, `"generation":18446744073709551616,`, 1)},
		{"uppercase hex head", strings.Replace(g, `"head":"`+checkpointed().Head.String(), `"head":"`+strings.ToUpper(checkpointed().Head.String()), 1)},
		{"short head", strings.Replace(g, `"head":"`+checkpointed().Head.String(), `"head":"abc`, 1)},
		{"empty-string zero ID", strings.Replace(g, `"parent":"0000000000000000000000000000000000000000000000000000000000000000"`, `"parent":""`, 1)},
		{"boolean size", strings.Replace(g, `"size":5000`, `"size":true`, 1)},
		{"nested garbage", strings.Replace(g, `"generation":5,`, `"generation":[[[[[[[[5]]]]]]]],`, 1)},
		{"valid json, broken rule", strings.Replace(g, `"generation":5,`, `"generation":3,`, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data == g {
				t.Fatal("the mutation did not apply; fix the test")
			}
			m, err := remote.DecodeManifest([]byte(tc.data))
			if !errors.Is(err, remote.ErrCorruptManifest) || !errors.Is(err, remote.ErrIntegrity) || m != nil {
				t.Fatalf("DecodeManifest = %v, %v; want ErrCorruptManifest", m, err)
			}
		})
	}
}

func TestManifestDecodeSizeBounded(t *testing.T) {
	big := make([]byte, remote.MaxManifestBytes+1)
	for i := range big {
		big[i] = ' '
	}
	if _, err := remote.DecodeManifest(big); !errors.Is(err, remote.ErrCorruptManifest) {
		t.Fatalf("an oversized manifest decoded: %v", err)
	}
}
