package remote

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Registered descriptors of format version 4 (docs/storage.md §3C.8,
// docs/publication.md §3, §5.2 step 3). A builder of a rollup or a
// checkpoint PUTs its pack (content- or ID-keyed) in the background, then
// registers a descriptor: one small immutable object under proposals/,
// which the fold that next LISTs reads and copies into `current` in its
// own conditional write. No builder writes `current` itself, so the key's
// budget of writes goes to commits only.
//
//	proposals/<G>-r-<blake3>   {"version":4,"rollup":ROLLUP}\n       G: the block's last generation
//	proposals/<G>-c-<blake3>   {"version":4,"checkpoint":CP}\n      G: the checkpoint's through
//
// ROLLUP and CP are the objects of `current` (§3C.3), byte for byte;
// <blake3> is the BLAKE3-256 of the whole object (64 hex digits). G and
// the descriptor's own checksum are in the key, so a fold tells from a
// LIST alone which registrations it has copied already (it encodes the
// descriptors `current` holds) and which could still be of use
// (ManifestV4.WantsRegistered), and GETs only those.

// ErrCorruptRegistered refines ErrIntegrity: a registered descriptor that
// is not what its key says or not in canonical form. A fold ignores it.
var ErrCorruptRegistered error = &noinit.Wrapped{Msg: "remote: corrupt registered descriptor: remote: integrity violation", Base: errIntegrity}

// Kinds of registered descriptors, as ParseProposalEntry returns them.
const (
	EntryRollup     EntryKind = iota + 10 // proposals/<G>-r-<blake3>
	EntryCheckpoint                       // proposals/<G>-c-<blake3>
)

// RetainedV4 is how many older checkpoints a fold keeps when it makes a
// registered checkpoint the active one (the default of
// --retained-checkpoints: the descriptor carries the CP fields only).
const RetainedV4 = DefaultRetainedCheckpoints

// NewestRollupsV4 is how many of the newest blocks of each level
// `current` keeps; MaxRollupsPerLevelV4 adds the level's climb block
// (climbFirstV4), so 9 levels keep at most 18 ≤ MaxRollupsV4. That is
// all a catch-up within 2·log2(k) + 4 requests needs (rollup_v4.go), and
// every descriptor costs `current` about 120 bytes of its 16 KiB.
const (
	NewestRollupsV4      = 1
	MaxRollupsPerLevelV4 = NewestRollupsV4 + 1
)

// climbFirstV4 returns the first generation of the block of level l on
// the climb from the active checkpoint's through c, or 0 when the climb
// has no block of that level. The climb is the path of a reader that
// holds c and nothing later: the generations up to the next multiple of
// 4 at or above max(c, 4) one by one (no block holds generations 1..4
// but first blocks, which are never built), then from each position p
// the block of the largest level that starts at p, (p, p+2^a] with 2^a
// the largest power of two dividing p (at most 2^MaxRollupLevel). Each
// step doubles the alignment, so the climb has at most one block per
// level below MaxRollupLevel; at the top it goes on by blocks of that
// level, of which the newest are kept anyway. A reader after c finds
// the blocks it needs among the newest ones (PlanCatchUpV4); a reader at
// c, or in a young notebook, needs these.
func climbFirstV4(c uint64, l int) uint64 {
	if l < MinRollupLevel || l > MaxRollupLevel {
		return 0 // no such level: the loop below would not end
	}
	p := (max(c, 4) + 3) &^ 3
	for {
		a := min(bits.TrailingZeros64(p), MaxRollupLevel)
		switch {
		case a == l:
			return p + 1
		case a > l:
			return 0
		}
		p += 1 << a
	}
}

// keepsRollupV4 reports whether `current`, with the active checkpoint
// through c, keeps the block of level l that starts at first when newer
// blocks of that level are listed: one of the NewestRollupsV4 newest, or
// the level's climb block.
func keepsRollupV4(c uint64, l int, first uint64, newer int) bool {
	return first > c && (newer < NewestRollupsV4 || first == climbFirstV4(c, l))
}

// Registered is one registered descriptor: a rollup or a checkpoint.
type Registered struct {
	Kind       EntryKind // EntryRollup or EntryCheckpoint
	Rollup     RollupRef
	Checkpoint Checkpoint
}

// Generation is the G of the descriptor's key: a rollup's last
// generation, a checkpoint's through.
func (r Registered) Generation() uint64 {
	if r.Kind == EntryRollup {
		return r.Rollup.First + 1<<r.Rollup.Level - 1
	}
	return r.Checkpoint.Through
}

func (r Registered) validate() error {
	switch r.Kind {
	case EntryRollup:
		if r.Rollup.First == 0 || r.Rollup.Level < MinRollupLevel || r.Rollup.Level > MaxRollupLevel {
			return r.Rollup.validate(0)
		}
		if r.Rollup.First == 1 {
			// A first block would be the whole notebook again at every
			// level; a reader starts from a checkpoint or the increments.
			return errors.New("a block that starts at generation 1 is not registered")
		}
		return r.Rollup.validate(r.Generation())
	case EntryCheckpoint:
		if r.Checkpoint.IsGenesis() {
			return errors.New("the genesis is not registered")
		}
		return validateCheckpoint(r.Checkpoint, map[string]bool{})
	}
	return fmt.Errorf("kind %d", r.Kind)
}

// EncodeRegistered returns the key and bytes a builder PUTs.
func EncodeRegistered(r Registered) (string, []byte, error) {
	if err := r.validate(); err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrCorruptRegistered, err)
	}
	b := encodeRegistered(r)
	return RegisteredKey(r.Kind, r.Generation(), cas.Sum(b)), b, nil
}

func encodeRegistered(r Registered) []byte {
	b := make([]byte, 0, 320)
	if r.Kind == EntryRollup {
		b = appendRollup(append(b, `{"version":4,"rollup":`...), r.Rollup)
	} else {
		b = appendCheckpoint(append(b, `{"version":4,"checkpoint":`...), r.Checkpoint)
	}
	return append(b, "}\n"...)
}

func appendRollup(b []byte, r RollupRef) []byte {
	b = strconv.AppendInt(append(b, `{"level":`...), int64(r.Level), 10)
	b = strconv.AppendUint(append(b, `,"first":`...), r.First, 10)
	b = appendID(append(b, `,"blake3":`...), r.Sum)
	b = strconv.AppendInt(append(b, `,"size":`...), r.Size, 10)
	return append(b, '}')
}

// RegisteredKey is proposals/<G, 20 digits>-r-<sum> (a rollup) or
// -c-<sum> (a checkpoint).
func RegisteredKey(kind EntryKind, g uint64, sum cas.ID) string {
	infix := "-r-"
	if kind == EntryCheckpoint {
		infix = "-c-"
	}
	return fmt.Sprintf("%s%020d%s%s", ProposalsPrefix, g, infix, sum)
}

// parseRegistered parses <G, 20 digits>-r|c-<64 hex>.
func parseRegistered(s string) (EntryKind, uint64, string, bool) {
	if len(s) != 20+3+64 || s[20] != '-' || s[22] != '-' {
		return 0, 0, "", false
	}
	kind := EntryRollup
	switch s[21] {
	case 'r':
	case 'c':
		kind = EntryCheckpoint
	default:
		return 0, 0, "", false
	}
	g, err := strconv.ParseUint(s[:20], 10, 64)
	if err != nil || strings.ContainsAny(s[:20], "+-") {
		return 0, 0, "", false
	}
	if id, err := cas.ParseID(s[23:]); err != nil || id.String() != s[23:] {
		return 0, 0, "", false
	}
	return kind, g, s[23:], true
}

// DecodeRegistered decodes the object read at key: canonical bytes whose
// BLAKE3, kind and G are the key's. Anything else is ErrCorruptRegistered.
func DecodeRegistered(key string, data []byte) (Registered, error) {
	r, err := decodeRegistered(key, data)
	if err != nil {
		return Registered{}, fmt.Errorf("%w: %s: %w", ErrCorruptRegistered, key, err)
	}
	return r, nil
}

func decodeRegistered(key string, data []byte) (Registered, error) {
	kind, g, sum, _, _ := ParseProposalEntry(key)
	if kind != EntryRollup && kind != EntryCheckpoint {
		return Registered{}, errors.New("not a registered descriptor's key")
	}
	if len(data) > 1024 || cas.Sum(data).String() != sum {
		return Registered{}, errors.New("the bytes are not the key's")
	}
	r := Registered{Kind: kind}
	p := &parser{b: data}
	err := p.objectOpt([]string{"version", "rollup", "checkpoint"}, 1<<1|1<<2, func(f int) error {
		switch {
		case f == 0:
			v, err := p.uint()
			if err == nil && v != ManifestV4Version {
				err = fmt.Errorf("version %d", v)
			}
			return err
		case f == 1 && kind == EntryRollup:
			return p.object(rollupFields, func(f int) error {
				switch f {
				case 0:
					v, err := p.uint()
					r.Rollup.Level = int(min(v, 1<<20))
					return err
				case 1:
					return p.uintTo(&r.Rollup.First)
				case 2:
					return p.idTo(&r.Rollup.Sum)
				default:
					return p.sizeTo(&r.Rollup.Size)
				}
			})
		case f == 2 && kind == EntryCheckpoint:
			return p.checkpoint(&r.Checkpoint)
		}
		return errors.New("the descriptor's kind is not the key's")
	})
	if err == nil {
		err = p.end()
	}
	if err == nil {
		err = r.validate()
	}
	switch {
	case err != nil:
		return Registered{}, err
	case r.Generation() != g:
		return Registered{}, errors.New("the descriptor's generation is not the key's")
	case !bytes.Equal(encodeRegistered(r), data):
		return Registered{}, errors.New("not in canonical form")
	}
	return r, nil
}

// registeredKeys returns the keys of the descriptors m holds (as their
// builders registered them): a fold GETs none of these again.
func (m *ManifestV4) registeredKeys() map[string]bool {
	out := map[string]bool{}
	add := func(r Registered) {
		b := encodeRegistered(r)
		out[RegisteredKey(r.Kind, r.Generation(), cas.Sum(b))] = true
	}
	for _, r := range m.Rollups {
		add(Registered{Kind: EntryRollup, Rollup: r})
	}
	if !m.Checkpoint.IsGenesis() {
		add(Registered{Kind: EntryCheckpoint, Checkpoint: m.Checkpoint})
	}
	for _, cp := range m.Checkpoints {
		add(Registered{Kind: EntryCheckpoint, Checkpoint: cp})
	}
	return out
}

// WantsRegistered filters the registrations a LIST returned (their keys)
// to those a write on m could still copy, by the key alone: not held by
// m already; a rollup whose block ends above m's active checkpoint, of a
// level whose block is not listed yet and would be kept (one of the
// NewestRollupsV4 newest of its level, or the level's climb block); a
// checkpoint newer than the active one through a version-4 generation
// below m's. The fold GETs only these, so registrations already copied
// or superseded cost nothing but their LIST entries.
func (m *ManifestV4) WantsRegistered(keys []string) []string {
	if m == nil {
		return nil
	}
	held := m.registeredKeys()
	var out []string
	for _, k := range keys {
		kind, g, _, _, _ := ParseProposalEntry(k)
		if held[k] || g <= m.Checkpoint.Through {
			continue
		}
		if kind == EntryCheckpoint && g >= m.Upgraded && g < m.Generation || kind == EntryRollup && m.rollupRoom(g) {
			out = append(out, k)
		}
	}
	return out
}

// rollupRoom: some level's block ending at g is not listed and would be
// kept (keepsRollupV4: among the newest of its level, or its climb
// block).
func (m *ManifestV4) rollupRoom(g uint64) bool {
	for _, l := range RollupsEndingAt(g) {
		first, newer := g-1<<l+1, 0
		if first == 1 || first <= m.Checkpoint.Through {
			continue // never registered, or dropped (AddRegistered)
		}
		for _, r := range m.Rollups {
			if r.Level == l && r.First >= first {
				newer++
			}
		}
		if keepsRollupV4(m.Checkpoint.Through, l, first, newer) && !slices.ContainsFunc(m.Rollups, func(r RollupRef) bool { return r.Level == l && r.First == first }) {
			return true
		}
	}
	return false
}

// AddRegistered copies the registered descriptors regs into m, the
// manifest of a write (NextV4's, before it is encoded), by the rules of
// docs/storage.md §3C.8, and returns how many it took. headAt returns the
// head of a generation of m's history below its tail (the fold reads the
// segments; nil or false: unknown, and a checkpoint through it is
// skipped). A descriptor that breaks a rule is skipped, never an error:
// a registration is an optimisation, and a commit never fails because of
// one.
//
//   - a rollup: its block ends at or below m's generation and above the
//     active checkpoint's through; a block already listed is skipped
//     (one descriptor per block, the first copied);
//   - a checkpoint: its through is a version-4 generation below m's and
//     above the active checkpoint's, with that generation's head (from
//     the tail, or headAt), and its publication is
//     none of `recent`'s or the checkpoints'; it becomes the active one,
//     the previous active one retained (at most RetainedV4, newest first);
//   - then rollups whose blocks start before the active checkpoint's
//     through are dropped (a reader that far behind starts from the
//     checkpoint), and per level only the NewestRollupsV4 newest blocks
//     are kept, and the level's climb block from the active checkpoint
//     (climbFirstV4; the oldest dropped first): what PlanCatchUpV4 needs
//     to stay within 2·log2(k) + 4 requests (rollup_v4.go).
func (m *ManifestV4) AddRegistered(regs []Registered, headAt func(g uint64) (cas.ID, bool)) int {
	took := 0
	slices.SortStableFunc(regs, func(a, b Registered) int { return cmpUint(a.Generation(), b.Generation()) })
	for _, r := range regs {
		if r.validate() != nil || r.Generation() > m.Generation || r.Generation() <= m.Checkpoint.Through {
			continue
		}
		if r.Kind == EntryRollup {
			if slices.ContainsFunc(m.Rollups, func(o RollupRef) bool { return o.Level == r.Rollup.Level && o.First == r.Rollup.First }) {
				continue
			}
			m.Rollups = append(m.Rollups, r.Rollup)
			took++
			continue
		}
		cp := r.Checkpoint
		head, ok := cas.ID{}, false
		if inc, in := m.Increment(cp.Through); in {
			head, ok = inc.Head, true
		} else if headAt != nil && cp.Through >= m.Upgraded {
			head, ok = headAt(cp.Through)
		}
		if !ok || head != cp.Head || cp.Through >= m.Generation || slices.Contains(m.Recent, cp.Publication) ||
			cp.Publication == m.Checkpoint.Publication || slices.ContainsFunc(m.Checkpoints, func(o Checkpoint) bool { return o.Publication == cp.Publication }) {
			continue
		}
		if !m.Checkpoint.IsGenesis() {
			m.Checkpoints = append([]Checkpoint{m.Checkpoint}, m.Checkpoints...)
			m.Checkpoints = m.Checkpoints[:min(len(m.Checkpoints), RetainedV4)]
		}
		m.Checkpoint = cp
		took++
	}
	// A block that starts before the active checkpoint: a reader that far
	// behind starts from the checkpoint, where it holds none of the trees
	// of the block's start that the rollup's deltas are stored against.
	m.Rollups = slices.DeleteFunc(m.Rollups, func(r RollupRef) bool { return r.First <= m.Checkpoint.Through })
	slices.SortFunc(m.Rollups, func(a, b RollupRef) int {
		if a.Level != b.Level {
			return b.Level - a.Level
		}
		return cmpUint(a.First, b.First)
	})
	out := m.Rollups[:0]
	for i, r := range m.Rollups {
		newer := 0
		for _, o := range m.Rollups[i+1:] {
			if o.Level == r.Level {
				newer++
			}
		}
		if keepsRollupV4(m.Checkpoint.Through, r.Level, r.First, newer) {
			out = append(out, r)
		}
	}
	m.Rollups = out
	return took
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
