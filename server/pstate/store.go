package pstate

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/remote"
)

// The store-id record, P/stores/<hash(URL)>/store-id: the ID last read
// from the store at a URL (remote/storeid.go) and the key under which
// this host keeps that store's records (P/stores/<key>/...). A sealed
// record (Seal) of two fields: the ID, or "-" while the store was not yet
// named, and the key.

// noStoreID stands for "not yet named" in the store-id record.
const noStoreID = "-"

func storeIDFile(private, urlKey string) string {
	return filepath.Join(private, "stores", urlKey, "store-id")
}

// ReadStoreID returns the ID ("": not yet named) and key P recorded for
// the URL whose own key is urlKey, and whether there is such a record (a
// damaged one is none).
func ReadStoreID(private, urlKey string) (id, key string, recorded bool) {
	data, err := os.ReadFile(storeIDFile(private, urlKey))
	if err != nil {
		return "", "", false
	}
	f, ok := Unseal(data, 2)
	if !ok || (f[0] != noStoreID && !remote.IsStoreID(f[0])) || len(f[1]) != len(urlKey) {
		return "", "", false
	}
	if f[0] == noStoreID {
		return "", f[1], true
	}
	return f[0], f[1], true
}

// WriteStoreID records id ("": not yet named) and key for the URL whose
// own key is urlKey.
func WriteStoreID(private, urlKey, id, key string) error {
	shown := id
	if id == "" {
		shown = noStoreID
	}
	return WriteAtomic(storeIDFile(private, urlKey), Seal(shown, key))
}

// Remembered is what P records about the store of a directory, in
//
//	P/remotes/<hash(L resolved)>   {"dir", "identity", "storeId", "locator"}
//
// keyed by the directory alone (the baselines are keyed by directory and
// store), so that it is found before the store is known.
type Remembered struct {
	Dir      string `json:"dir"`      // the directory (resolved)
	Identity string `json:"identity"` // remote.Store.Identity of the store
	StoreID  string `json:"storeId"`  // the store's ID then ("": not yet named)
	Locator  string `json:"locator"`  // Config.StoreLocator then ("": none given)
}

func rememberedFile(private, realDir string) string {
	return filepath.Join(private, "remotes", HashKey(realDir))
}

// ReadRemembered returns the record of the resolved directory realDir,
// and whether there is a readable one.
func ReadRemembered(private, realDir string) (Remembered, bool) {
	data, err := os.ReadFile(rememberedFile(private, realDir))
	if err != nil {
		return Remembered{}, false
	}
	var r Remembered
	if json.Unmarshal(data, &r) != nil || r.Dir != realDir || r.Identity == "" {
		return Remembered{}, false
	}
	return r, true
}

// WriteRemembered records r for its directory, durably.
func WriteRemembered(private string, r Remembered) error {
	data, _ := json.Marshal(r)
	return WriteAtomic(rememberedFile(private, r.Dir), data)
}
