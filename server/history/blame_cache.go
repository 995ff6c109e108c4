package history

// The blame cache: a blame of a whole file leaves, in the private cache,
// each line's publication at the head it read. The next blame of that file
// walks only the publications accepted since: when its walk reaches that
// head with lines left, the held version is the cached file (its ID is
// checked), and the lines left take their cached publications. A cache
// that does not fit (another file ID, another line count, a head that is
// no longer in the retained history, a file that does not decode) is
// ignored, and the walk goes on as without it; a cached publication that
// has left the retained history since reads "before" the oldest retained
// one, as a walk would say. Losing the cache costs only time.

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// blameCache is the cache file of one path (JSON).
type blameCache struct {
	Path  string                   `json:"path"`
	Head  string                   `json:"head"` // the head the lines were read at
	File  string                   `json:"file"` // the file's ID there
	Lines []blameCacheLine         `json:"lines"`
	Pubs  map[uint64]blameCachePub `json:"pubs"` // the publications lines name

	head, file cas.ID
}

type blameCacheLine struct {
	Generation uint64 `json:"g"`
	Before     bool   `json:"b,omitempty"`
}

type blameCachePub struct {
	Time    int64  `json:"t"` // Unix seconds
	Message string `json:"m"`
	Author  string `json:"a,omitempty"`
}

// BlameCacheFile is the file, under the store's directory dir in P, that
// keeps the blame of path p.
func BlameCacheFile(dir, p string) string {
	return filepath.Join(dir, "blame", pstate.HashKey(p)+".json")
}

// loadBlameCache returns the cache of p under dir, or nil.
func loadBlameCache(dir, p string) *blameCache {
	data, err := os.ReadFile(BlameCacheFile(dir, p))
	if err != nil {
		return nil
	}
	var c blameCache
	if json.Unmarshal(data, &c) != nil || c.Path != p {
		return nil
	}
	if c.head, err = cas.ParseID(c.Head); err != nil {
		return nil
	}
	if c.file, err = cas.ParseID(c.File); err != nil {
		return nil
	}
	for _, l := range c.Lines {
		if _, ok := c.Pubs[l.Generation]; !ok && !l.Before {
			return nil
		}
	}
	return &c
}

// saveBlameCache records res under dir, read at head where the file is
// file. A failure is logged: the cache only saves time.
func saveBlameCache(dir string, log *slog.Logger, res *BlameResult, head, file cas.ID) {
	c := blameCache{Path: res.Path, Head: head.String(), File: file.String(), Lines: make([]blameCacheLine, len(res.Lines)), Pubs: map[uint64]blameCachePub{}}
	for i, l := range res.Lines {
		c.Lines[i] = blameCacheLine{Generation: l.Generation, Before: l.Before}
		if !l.Before {
			c.Pubs[l.Generation] = blameCachePub{Time: l.Time.Unix(), Message: l.Message, Author: l.Author}
		}
	}
	data, err := json.Marshal(c)
	if err == nil {
		err = pstate.WriteReplace(BlameCacheFile(dir, res.Path), data, false)
	}
	if err != nil {
		log.Info("blame: the cache was not written", "err", err)
	}
}

// fromCache gives the lines left their cached publications when the held
// version is the cached one; false when the cache does not fit.
func (w *blameWalk) fromCache() bool {
	c := w.cache
	if w.heldID != c.file || len(c.Lines) != len(w.track) {
		return false
	}
	oldest := w.h.ret.Oldest
	for i, k := range w.track {
		if k < 0 || w.lines[k].Generation != 0 {
			continue
		}
		cl, l := c.Lines[i], &w.lines[k]
		if cl.Before || cl.Generation < oldest {
			l.Generation, l.Before = oldest, true
			continue
		}
		pub := c.Pubs[cl.Generation]
		l.Generation, l.Time, l.Message, l.Author = cl.Generation, time.Unix(pub.Time, 0).UTC(), pub.Message, pub.Author
	}
	w.left = 0
	return true
}
