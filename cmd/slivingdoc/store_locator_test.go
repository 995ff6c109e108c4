package main

import (
	"encoding/json"
	"testing"
)

// A directory remembers its store by the locator's bytes, and directories
// pulled by earlier builds hold json.Marshal's: the hand-written encoding
// must give the same bytes, or every such directory would refuse its own
// store as another (STORE_MISMATCH).
func TestStoreLocatorEncodesAsJSON(t *testing.T) {
	for _, l := range []storeLocator{
		{},
		{File: "/home/me/notes store"},
		{File: `C:\Users\me\"quoted"\<tag>&amp;` + "\u2028\x01\xff"},
		{Bucket: "b"},
		{Bucket: "b", Prefix: "team/notes/", Region: "eu-west-1", Endpoint: "http://127.0.0.1:8333", PathStyle: true},
		{Bucket: "b", PathStyle: true},
		{PathStyle: true},
		{File: "/x", Bucket: "b", Prefix: "p"},
	} {
		want, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.encode(); got != string(want) {
			t.Errorf("%+v: encoded %s, json.Marshal gives %s", l, got, want)
		}
	}
}
