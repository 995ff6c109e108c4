package main

import (
	"encoding/json"

	"github.com/slivingdoc/slivingdoc/remote/s3store"
	"github.com/slivingdoc/slivingdoc/server"
)

// A directory remembers its store (server/storeview/remembered.go): the
// engine records, for each directory it pulls or commits, the store's
// locator, which is this command's description of the store settings it
// used.
// A later command on that directory, or run inside it, that gives no
// store setting (neither --store nor --bucket, as a flag or in the
// environment) uses that store instead of the default, like git using a
// clone's remote; one that names another store is refused by the engine
// with STORE_MISMATCH.

// storeLocator is the locator's JSON: the settings that select the store,
// never a credential (those come from the AWS chain each time).
type storeLocator struct {
	File      string `json:"file,omitempty"`
	Bucket    string `json:"bucket,omitempty"`
	Prefix    string `json:"prefix,omitempty"`
	Region    string `json:"region,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	PathStyle bool   `json:"pathStyle,omitempty"`
}

// locator is sp's locator.
func (sp storeSpec) locator() string {
	l := storeLocator{File: sp.fileDir}
	if sp.s3.Bucket != "" {
		l = storeLocator{Bucket: sp.s3.Bucket, Prefix: sp.s3.Prefix, Region: sp.s3.Region, Endpoint: sp.s3.Endpoint, PathStyle: sp.s3.PathStyle}
	}
	return l.encode()
}

// encode is json.Marshal(l), written out: the locator is built by every
// command, and the first json.Marshal of a struct type pays for the
// reflection over its fields (about 60 µs, 1% of a no-op status).
// TestStoreLocatorEncodesAsJSON holds it to json.Marshal's bytes.
func (l storeLocator) encode() string {
	b := []byte{'{'}
	field := func(name, v string) {
		if v == "" {
			return
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), name...), '"', ':')
		q, _ := json.Marshal(v) // a string: no struct reflection
		b = append(b, q...)
	}
	field("file", l.File)
	field("bucket", l.Bucket)
	field("prefix", l.Prefix)
	field("region", l.Region)
	field("endpoint", l.Endpoint)
	if l.PathStyle {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, `"pathStyle":true`...)
	}
	return string(append(b, '}'))
}

// specOf is the store spec a locator describes (false: not one this
// command wrote).
func specOf(locator string) (storeSpec, bool) {
	var l storeLocator
	if json.Unmarshal([]byte(locator), &l) != nil {
		return storeSpec{}, false
	}
	switch {
	case l.File != "" && l.Bucket == "":
		return storeSpec{fileDir: l.File}, true
	case l.Bucket != "" && l.File == "":
		return storeSpec{s3: s3store.Config{Bucket: l.Bucket, Prefix: l.Prefix, Region: l.Region, Endpoint: l.Endpoint, PathStyle: l.PathStyle}}, true
	}
	return storeSpec{}, false
}

// storeGiven reports whether the store was selected by a flag or the
// environment rather than by default.
func (s *settings) storeGiven() bool {
	_, storeSrc := s.lookup(&setStore)
	_, bucketSrc := s.lookup(&setBucket)
	return storeSrc != fromDefault || bucketSrc != fromDefault
}

// rememberedStore is the store of s.Dir when no store setting was given
// and the directory (or one above it) remembers one; spec otherwise.
func (s *settings) rememberedStore(spec storeSpec, privateRoot string) storeSpec {
	if s.Dir == "" || s.storeGiven() {
		return spec
	}
	r, ok := server.RememberedStoreOf(privateRoot, s.Dir)
	if !ok {
		return spec
	}
	if remembered, ok := specOf(r.Locator); ok {
		return remembered
	}
	return spec
}
