package main

// The outputSchema a serve process advertises is the one the catalogue
// builds (server/mcpserver/schema.go), so checkConforms, which validates
// every result the black-box suite collects, checks against what hosts see.

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/mcpserver"
)

func TestAdvertisedSchemaIsTheBuiltOne(t *testing.T) {
	m := newNotebook(t, backends[0]).agent("a").serve()
	list, err := m.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 {
		t.Fatalf("%d tools", len(list.Tools))
	}
	var want bytes.Buffer
	if err := json.Compact(&want, mcpserver.OutputSchema()); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		got, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal(want.Bytes(), &b)
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		if !bytes.Equal(ga, gb) {
			t.Errorf("%s advertises\n%s\nwant\n%s", tool.Name, ga, gb)
		}
	}
}
