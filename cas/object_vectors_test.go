package cas_test

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The official BLAKE3 vector for empty input: IDs are plain BLAKE3-256.
func TestSumIsBLAKE3(t *testing.T) {
	const want = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	if got := cas.Sum(nil).String(); got != want {
		t.Fatalf("Sum(\"\") = %s, want %s", got, want)
	}
}

// vectorObjects builds the fixed objects whose encodings and IDs are
// pinned here and printed in docs/format.md.
func vectorObjects(t *testing.T) map[string]cas.Object {
	t.Helper()
	m := cas.NewObjectSet()
	objs := map[string]cas.Object{}
	get := func(id cas.ID) cas.Object {
		o, err := m.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	objs["chunk abc"] = mustChunk(t, []byte("abc"))
	empty := mustFile(t, m, nil)
	hello := mustFile(t, m, []byte("hello\n"))
	objs["file empty"] = get(empty)
	objs["file hello"] = get(hello)
	emptyTree, err := cas.WriteTree(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs["tree empty"] = get(emptyTree)
	root, err := cas.WriteTree(m, map[string]cas.ID{"notes/todo.md": hello, "readme.md": empty})
	if err != nil {
		t.Fatal(err)
	}
	objs["tree root"] = get(root)
	sub, err := cas.WriteTree(nil, map[string]cas.ID{"todo.md": hello})
	if err != nil {
		t.Fatal(err)
	}
	objs["tree notes"] = get(sub)
	objs["commit first"] = cas.EncodeCommit(cas.Commit{
		Tree:        root,
		Publication: "01890a5d-ac96-774b-bcce-b302099a8057",
		Time:        time.Date(2026, 1, 2, 3, 4, 5, 999, time.UTC),
		Message:     []byte("first"),
	})
	objs["file 1 MiB"] = get(mustFile(t, m, genBytes(1, 1<<20)))
	// InlineMax is pinned by the representation of the sizes around it.
	objs["file 4096 inline"] = get(mustFile(t, m, genBytes(1, 4096)))
	objs["file 4097 chunked"] = get(mustFile(t, m, genBytes(1, 4097)))
	return objs
}

func TestObjectVectorsArePinned(t *testing.T) {
	want := map[string]struct{ id, body string }{
		"chunk abc":         {"0c038bbaa34f7e5564a11ad6165c7b203081c283ed4ae270601e324e8acca296", "01616263"},
		"file empty":        {"cd60d75282bae1f9754e8cbc7590d8b3ed2f4c93e47b12748c4cc8b273a87945", "0200"},
		"file hello":        {"f631e8fca3599f63e8a4c6e3a4f25b94035d443cc099d39d60833368b569e401", "020068656c6c6f0a"},
		"tree empty":        {"8f207d1aed1814b8b9fadd940f2ca853916863b6a94fd74135dc1d365baf5bb5", "0300000000"},
		"tree notes":        {"81fd03ff856d58480fc9248979a194e13b3a8853a84157623c8425555750f192", "0301000000020700746f646f2e6d64f631e8fca3599f63e8a4c6e3a4f25b94035d443cc099d39d60833368b569e401"},
		"tree root":         {"c573a1f88cda8eb56643e64a6745a6acd6f3064267d62ace05bd0a3b90575ef9", "03020000000305006e6f74657381fd03ff856d58480fc9248979a194e13b3a8853a84157623c8425555750f192020900726561646d652e6d64cd60d75282bae1f9754e8cbc7590d8b3ed2f4c93e47b12748c4cc8b273a87945"},
		"commit first":      {"1013042562646073728dccb4fb7d80033a5d0bc53282ca3231d7a86a578a3ab5", "04c573a1f88cda8eb56643e64a6745a6acd6f3064267d62ace05bd0a3b90575ef90000000000000000000000000000000000000000000000000000000000000000a5355769000000002400000030313839306135642d616339362d373734622d626363652d623330323039396138303537050000006669727374"},
		"file 1 MiB":        {"52a6e4aa87c440698725a8b0efd59160ac99ca7d987451ae03b4a13c2ae1fc35", ""},
		"file 4096 inline":  {"5136f69b7595fcb18e24e706524aca4bd7bee0956c3d7642835694672648fa84", ""},
		"file 4097 chunked": {"f9b12fcd59d9879715fdab0c0b39c0cb48394500429ca0c3c0cdb8728a4a7e38", ""},
	}
	objs := vectorObjects(t)
	for name, w := range want {
		o := objs[name]
		if got := o.ID.String(); got != w.id {
			t.Errorf("%s: ID %s, want %s", name, got, w.id)
		}
		if w.body != "" {
			if got := hex.EncodeToString(o.Body); got != w.body {
				t.Errorf("%s: body %s, want %s", name, got, w.body)
			}
		}
	}
}
