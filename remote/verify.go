package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Verify (DESIGN §5, docs/operations.md) checks a whole store:
//
//	current      decodes, and obeys every manifest rule (a rule-breaking
//	             manifest that still parses is checked further, so one
//	             report shows everything)
//	each pack    every pack any chain names: present, size and BLAKE3 as
//	             the manifest says, trailer and index sound, every object
//	             decodes to its ID
//	increments   each increment's pack holds its head commit, with the
//	             parent and publication the manifest records
//	closures     the head of every chain (active and retained) reads
//	             completely from that chain's own packs
//	             (v4: a generation's packs are its proposal's, unwrapped,
//	             and the group pack of the fold that re-parented it, which
//	             then holds its head commit)
//	history      (v2) every segment `current` indexes: present, size and
//	             BLAKE3 as described, strictly decoded; the increments of
//	             the whole retained history chain parent to head; each
//	             checkpoint's head is the head of its generation
//	rollups      (v2) every rollup above the active checkpoint opens, its
//	             objects match their IDs, and it holds the commit of the
//	             head its block ends at
//	generations  no pack, segment or rollup names a generation above
//	             `current`'s, no proposal was built on one, and `current`
//	             is not absent while packs exist (a store restored from an
//	             older backup, docs/operations.md)
//	store ID     the store-id object, when present, is well formed
//	orphans      packs no chain names: listed, not an error
//
// Packs are read one at a time and kept in memory for the closure walk of
// their chain; chains are checked one after the other.

// Finding codes. They are stable tokens for scripts and tests.
const (
	FindingManifestUnreadable = "MANIFEST_UNREADABLE" // current cannot be parsed at all
	FindingManifestInvalid    = "MANIFEST_INVALID"    // current parses but breaks a rule
	FindingPackMissing        = "PACK_MISSING"
	FindingPackSize           = "PACK_SIZE_MISMATCH"
	FindingPackChecksum       = "PACK_CHECKSUM_MISMATCH"
	FindingPackCorrupt        = "PACK_CORRUPT" // right size and checksum, but the pack or an object in it is damaged
	FindingIncrement          = "INCREMENT_MISMATCH"
	FindingClosure            = "CLOSURE_INCOMPLETE"
	FindingSegmentMissing     = "SEGMENT_MISSING"
	FindingSegmentCorrupt     = "SEGMENT_CORRUPT" // wrong size, checksum or rules, or a history that does not chain
	FindingRollupCorrupt      = "ROLLUP_CORRUPT"
	FindingGenerationRegress  = "GENERATION_REGRESSED" // objects newer than `current`: it went back in time
	FindingStoreIDCorrupt     = "STORE_ID_CORRUPT"     // the store-id object is not one a writer wrote (storeid.go)
)

// Finding is one integrity problem.
type Finding struct {
	Code   string // a Finding* token
	Key    string // the object concerned: "current" or a pack key
	Chain  string // "active", "retained 1", ... ("" for the manifest)
	Detail string // what is wrong, for people; never an object ID
}

// Report is the outcome of Verify. The store is whole when Findings is
// empty; orphans do not count.
type Report struct {
	Generation uint64 // of `current` (0 when absent or unreadable)
	Chains     int
	Packs      int   // referenced packs checked
	Bytes      int64 // their total size
	Objects    int   // objects decoded and checked against their IDs
	Findings   []Finding
	Orphans    []ObjectInfo // packs (or other objects under packs/) no chain references
	// History is how far back the history commands can read (the same
	// Retention that log, show, diff, restore and revert use); zero when
	// `current` is absent or unreadable.
	History Retention
}

// OK reports whether the store is whole.
func (r *Report) OK() bool { return len(r.Findings) == 0 }

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Progress, if set, is called after each pack is checked with the
	// number checked so far and the total.
	Progress func(done, total int)
}

// Verify checks the store. The error is for a store it could not read
// (unreachable, access denied, a listing that failed); integrity problems
// are Findings.
func Verify(ctx context.Context, store Store, opts VerifyOptions) (*Report, error) {
	n := Open(store, Options{})
	rep := &Report{}
	m, err := verifyManifest(ctx, store, rep)
	if err != nil {
		return nil, err
	}
	referenced := map[string]bool{}
	if m != nil {
		rep.Generation = m.Generation
		chains := m.Chains()
		var floor uint64 // version 4: the history below it a sweep deleted
		if m.V4 != nil {
			if swept, err := n.SweptV4(ctx, State{Manifest: m}); err != nil {
				return nil, fmt.Errorf("remote: verify: %w", err)
			} else if swept {
				floor = m.V4.OldestCheckpointV4().Through
			}
		}
		if m.Version >= 2 {
			if chains, err = verifyHistory(ctx, n, m, floor, rep, referenced); err != nil {
				return nil, err
			}
			if err := verifyRollups(ctx, n, m, rep, referenced); err != nil {
				return nil, err
			}
		}
		for _, c := range chains {
			if !c.Partial {
				rep.Chains++
			}
		}
		if rep.History, err = n.Retention(ctx, State{Manifest: m}); err != nil && !errors.Is(err, ErrMissingPack) && !errors.Is(err, ErrCorruptPack) {
			return nil, fmt.Errorf("remote: verify: %w", err)
		} // a damaged segment is a finding already

		total := 0
		for _, c := range chains {
			total += len(c.Packs())
		}
		done := 0
		for i, c := range chains {
			name := "active"
			if i > 0 {
				name = fmt.Sprintf("retained %d", i)
			}
			if err := verifyChain(ctx, n, c, name, rep, referenced, func() {
				done++
				if opts.Progress != nil {
					opts.Progress(done, total)
				}
			}); err != nil {
				return nil, err
			}
		}
	}
	if _, err := ReadStoreID(ctx, store); errors.Is(err, ErrCorruptStoreID) {
		rep.Findings = append(rep.Findings, Finding{Code: FindingStoreIDCorrupt, Key: StoreIDKey, Detail: "not a store ID object: a host that has not read the ID before cannot commit"})
	} else if err != nil {
		return nil, err
	}
	unreadable := len(rep.Findings) > 0 && rep.Findings[0].Code == FindingManifestUnreadable
	if err := listOrphans(ctx, store, !unreadable, referenced, rep); err != nil {
		return nil, err
	}
	if !unreadable {
		if err := verifyGenerations(ctx, store, m, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// verifyHistory walks every segment of a v2 manifest and returns the
// chains (active first) built from the history they index: of a
// version-4 one, the history above floor (below it a sweep deleted
// segments and packs; what it left is listed as orphans).
func verifyHistory(ctx context.Context, n *Notebook, m *Manifest, floor uint64, rep *Report, referenced map[string]bool) ([]Chain, error) {
	var incs []Increment
	var walk func(refs []SegmentRef) error
	walk = func(refs []SegmentRef) error {
		for _, ref := range refs {
			if ref.Last <= floor {
				continue
			}
			referenced[ref.Key()] = true
			s, err := n.ReadSegment(ctx, ref)
			switch {
			case errors.Is(err, ErrMissingPack):
				rep.Findings = append(rep.Findings, Finding{Code: FindingSegmentMissing, Key: ref.Key(), Detail: "the store does not have it"})
				continue
			case errors.Is(err, ErrCorruptPack):
				rep.Findings = append(rep.Findings, Finding{Code: FindingSegmentCorrupt, Key: ref.Key(), Detail: err.Error()})
				continue
			case err != nil:
				return fmt.Errorf("remote: verify: %w", err)
			}
			if s.Level == 1 {
				incs = append(incs, s.Increments...)
			} else if err := walk(s.Segments); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m.Segments); err != nil {
		return nil, err
	}
	incs = append(incs, m.Increments...)
	incs = slices.DeleteFunc(incs, func(inc Increment) bool { return inc.Generation <= floor })
	heads := map[uint64]cas.ID{}
	seen := map[string]bool{}
	for i, inc := range incs {
		heads[inc.Generation] = inc.Head
		if i > 0 && (inc.Generation <= incs[i-1].Generation || inc.Parent != incs[i-1].Head) {
			rep.Findings = append(rep.Findings, Finding{Code: FindingSegmentCorrupt, Key: inc.Pack.Key, Detail: "the history does not chain: the increment does not follow the one before it"})
		}
		if seen[inc.Publication] {
			rep.Findings = append(rep.Findings, Finding{Code: FindingSegmentCorrupt, Key: inc.Pack.Key, Detail: "a publication ID is listed twice"})
		}
		seen[inc.Publication] = true
	}
	for _, cp := range append([]Checkpoint{m.Checkpoint}, m.Checkpoints...) {
		if h, ok := heads[cp.Through]; ok && !cp.IsGenesis() && h != cp.Head {
			rep.Findings = append(rep.Findings, Finding{Code: FindingManifestInvalid, Key: CurrentKey, Detail: fmt.Sprintf("the checkpoint through generation %d does not hold that generation's head", cp.Through)})
		}
	}
	return chainsOf(m, incs), nil
}

// verifyRollups checks the rollups a reader may still use: those whose
// block ends above the active checkpoint.
func verifyRollups(ctx context.Context, n *Notebook, m *Manifest, rep *Report, referenced map[string]bool) error {
	if m != nil && m.V4 != nil {
		return verifyRollupsV4(ctx, n, m, rep, referenced)
	}
	objs, err := n.store.List(ctx, RollupsPrefix)
	if err != nil {
		return fmt.Errorf("remote: verify: list rollups: %w", err)
	}
	st := State{Manifest: m}
	for _, o := range objs {
		_, last, err := ParseRollupKey(o.Key)
		if err != nil || last <= m.Checkpoint.Through || last > m.Generation {
			continue // below the checkpoint: cleanup's; above: verifyGenerations
		}
		referenced[o.Key] = true
		data, _, err := n.store.Get(ctx, o.Key)
		if errors.Is(err, ErrNotFound) {
			continue // removed since the listing
		}
		if err != nil {
			return fmt.Errorf("remote: verify: %w", err)
		}
		p, err := cas.OpenPack(data)
		if err == nil {
			err = p.Verify()
		}
		if err != nil {
			rep.Findings = append(rep.Findings, Finding{Code: FindingRollupCorrupt, Key: o.Key, Detail: err.Error()})
			continue
		}
		rep.Objects += p.Len()
		inc, ok, err := n.HeadAt(ctx, st, last)
		if err != nil {
			return fmt.Errorf("remote: verify: %w", err)
		}
		if _, gerr := p.Get(inc.Head); ok && gerr != nil {
			rep.Findings = append(rep.Findings, Finding{Code: FindingRollupCorrupt, Key: o.Key, Detail: "it lacks the commit its block ends at"})
		}
	}
	return nil
}

// verifyRollupsV4 checks the rollups a version-4 `current` lists: each
// stored with its descriptor's size and BLAKE3, a readable pack (index
// and checksum; its tree deltas' bases are trees of the block's start,
// which the pack alone cannot rebuild) holding the commit its block ends
// at.
func verifyRollupsV4(ctx context.Context, n *Notebook, m *Manifest, rep *Report, referenced map[string]bool) error {
	st := State{Manifest: m}
	for _, r := range m.V4.Rollups {
		referenced[r.Key()] = true
		data, err := n.FetchRollupV4(ctx, r)
		switch {
		case errors.Is(err, ErrNotFound):
			rep.Findings = append(rep.Findings, Finding{Code: FindingPackMissing, Key: r.Key(), Detail: "the store does not have it"})
			continue
		case err != nil && !errors.Is(err, ErrCorruptPack):
			return fmt.Errorf("remote: verify: %w", err)
		}
		var p *cas.Pack
		if err == nil {
			p, err = cas.OpenPack(data)
		}
		if err != nil {
			rep.Findings = append(rep.Findings, Finding{Code: FindingRollupCorrupt, Key: r.Key(), Detail: err.Error()})
			continue
		}
		rep.Objects += p.Len()
		inc, ok, err := n.HeadAt(ctx, st, r.First+1<<r.Level-1)
		if err != nil {
			return fmt.Errorf("remote: verify: %w", err)
		}
		if _, gerr := p.Get(inc.Head); ok && gerr != nil {
			rep.Findings = append(rep.Findings, Finding{Code: FindingRollupCorrupt, Key: r.Key(), Detail: "it lacks the commit its block ends at"})
		}
	}
	return nil
}

// verifyGenerations reports objects whose key names a generation above
// `current`'s next one (a crashed writer's proposal): `current` was
// restored from an older copy, or deleted, and a reader trusting it would
// drop accepted publications.
func verifyGenerations(ctx context.Context, store Store, m *Manifest, rep *Report) error {
	var gen uint64
	if m != nil {
		gen = m.Generation
	}
	for _, prefix := range []string{IncrementsPrefix, CheckpointsPrefix, RollupsPrefix, SegmentsPrefix} {
		objs, err := store.List(ctx, prefix)
		if err != nil {
			return fmt.Errorf("remote: verify: list %s: %w", prefix, err)
		}
		for _, o := range objs {
			// A writer that crashed between uploading its pack (and
			// segments) and replacing `current` leaves objects of
			// generation+1: normal. Anything above is not.
			c, ok := parseCandidate(o.Key)
			if !ok || c.gen <= gen+1 {
				continue
			}
			what := fmt.Sprintf("names generation %d, above current's %d", c.gen, gen)
			if m == nil {
				what = fmt.Sprintf("names generation %d, but current is absent", c.gen)
			}
			rep.Findings = append(rep.Findings, Finding{Code: FindingGenerationRegress, Key: o.Key, Detail: what + ": current went back in time (restored from an older copy?); see docs/operations.md"})
		}
	}
	// A proposal (format v4, or a v3 registration) is keyed by the
	// generation it was built on, which its writer read in `current`: one
	// above `current`'s says the same. So does a registered rollup or
	// checkpoint (keyed by the generation its block or checkpoint ends
	// at, built once that generation was accepted); a fold would copy a
	// rollup of another history into `current` once the generation comes
	// round again.
	objs, err := store.List(ctx, ProposalsPrefix)
	if err != nil {
		return fmt.Errorf("remote: verify: list %s: %w", ProposalsPrefix, err)
	}
	for _, o := range objs {
		kind, g, _, _, _ := ParseProposalEntry(o.Key)
		if (kind != EntryProposal && kind != EntryRollup && kind != EntryCheckpoint) || g <= gen {
			continue
		}
		what := fmt.Sprintf("was built on generation %d, above current's %d", g, gen)
		if kind != EntryProposal {
			what = fmt.Sprintf("was registered for generation %d, above current's %d", g, gen)
		}
		if m == nil {
			what = fmt.Sprintf("was built on generation %d, but current is absent", g)
		}
		rep.Findings = append(rep.Findings, Finding{Code: FindingGenerationRegress, Key: o.Key, Detail: what + ": current went back in time (restored from an older copy?); see docs/operations.md"})
	}
	return nil
}

// verifyManifest reads `current`. It returns the manifest to check packs
// against: nil when absent or unparseable, the parsed value (with a
// MANIFEST_INVALID finding) when it breaks a rule.
func verifyManifest(ctx context.Context, store Store, rep *Report) (*Manifest, error) {
	data, _, err := store.Get(ctx, CurrentKey)
	if errors.Is(err, ErrNotFound) {
		return nil, nil // the empty notebook
	}
	if err != nil {
		return nil, fmt.Errorf("remote: verify: read current: %w", err)
	}
	if ManifestVersionOf(data) == ManifestV4Version {
		// Version 4 decodes only when it obeys every rule of `current`
		// alone; its history is checked as the view's (view_v4.go).
		m4, err := DecodeManifestV4(data)
		if err != nil {
			rep.Findings = append(rep.Findings, Finding{Code: FindingManifestUnreadable, Key: CurrentKey, Detail: err.Error()})
			return nil, nil
		}
		return viewV4(m4), nil
	}
	m, err := decodeAnyManifest(data)
	var fv *FormatVersionError
	if errors.As(err, &fv) {
		err = &FormatVersionError{Version: fv.Version, Newest: ManifestV4Version} // this build reads version 4 too
	}
	if err != nil {
		rep.Findings = append(rep.Findings, Finding{Code: FindingManifestUnreadable, Key: CurrentKey, Detail: err.Error()})
		return nil, nil
	}
	if err := m.Validate(); err != nil {
		rep.Findings = append(rep.Findings, Finding{Code: FindingManifestInvalid, Key: CurrentKey, Detail: err.Error()})
	}
	return m, nil
}

// verifyChain checks one chain's packs and the closure of its head.
func verifyChain(ctx context.Context, n *Notebook, c Chain, name string, rep *Report, referenced map[string]bool, tick func()) error {
	var packs packSource
	complete := true
	check := func(ref PackRef) (*cas.Pack, error) {
		defer tick()
		if _, _, _, err := ParsePackKey(ref.Key); err != nil && !isProposalKey(ref.Key) && !isGroupPackKey(ref.Key) {
			// A rule-breaking manifest may name any key; never fetch one
			// outside packs/ (it could be `current` or another notebook).
			rep.Findings = append(rep.Findings, Finding{Code: FindingManifestInvalid, Key: CurrentKey, Chain: name, Detail: fmt.Sprintf("names %q, which is not a pack key", ref.Key)})
			return nil, nil
		}
		referenced[ref.Key] = true
		// The chain's packs checked so far hold the bases of a
		// version-4 proposal's tree deltas (its parent's trees).
		p, f, err := checkPack(ctx, n, ref, packs)
		if err != nil {
			return nil, err
		}
		rep.Packs++
		if f != nil {
			f.Chain = name
			rep.Findings = append(rep.Findings, *f)
			return nil, nil
		}
		rep.Bytes += ref.Size
		rep.Objects += p.Len()
		return p, nil
	}
	if !c.Checkpoint.IsGenesis() {
		p, err := check(c.Checkpoint.Pack)
		if err != nil {
			return err
		}
		if p == nil {
			complete = false
		} else {
			packs = append(packs, p)
		}
	}
	groups := map[string]*cas.Pack{} // version 4: a fold's group pack, checked once
	for _, inc := range c.Increments {
		// Version 4: the group pack first, once per fold. It holds the
		// bases of a re-parented proposal's tree deltas (the trees of
		// the generation it was built on, which may lie before this
		// chain's checkpoint: docs/storage.md §3C.6).
		var g *cas.Pack
		if inc.Group.Key != "" {
			var seen bool
			if g, seen = groups[inc.Group.Key]; !seen {
				var err error
				if g, err = check(inc.Group); err != nil {
					return err
				}
				groups[inc.Group.Key] = g
				if g != nil {
					packs = append(packs, g)
				}
			}
		}
		p, err := check(inc.Pack)
		if err != nil {
			return err
		}
		if p == nil {
			complete = false
			continue
		}
		packs = append(packs, p)
		if _, err := p.Get(inc.Head); err != nil && inc.Group.Key != "" {
			// A re-parented generation: its head commit is the fold's,
			// in the group pack (its proposal holds the head it built;
			// a member taken as built, the first, has it there).
			if g == nil {
				complete = false
				continue
			}
			p = g
		}
		if d := incrementMismatch(p, inc); d != "" {
			rep.Findings = append(rep.Findings, Finding{Code: FindingIncrement, Key: inc.Pack.Key, Chain: name, Detail: d})
		}
	}
	head := c.Head()
	if !complete || head.IsZero() || c.Partial {
		return nil // the damaged packs are reported; a closure walk would only repeat them
	}
	if err := cas.CheckClosure(packs, head); err != nil {
		rep.Findings = append(rep.Findings, Finding{Code: FindingClosure, Chain: name, Detail: "the chain's head does not read completely from its packs: " + err.Error()})
	}
	return nil
}

// checkPack fetches and checks one referenced pack. A store failure is the
// error; an integrity problem is the finding.
func checkPack(ctx context.Context, n *Notebook, ref PackRef, bases cas.Source) (*cas.Pack, *Finding, error) {
	data, err := n.FetchPack(ctx, ref)
	switch {
	case errors.Is(err, ErrMissingPack):
		return nil, &Finding{Code: FindingPackMissing, Key: ref.Key, Detail: "the store does not have it"}, nil
	case errors.Is(err, ErrCorruptPack):
		if info, herr := n.store.Head(ctx, ref.Key); herr == nil && info.Size != ref.Size {
			return nil, &Finding{Code: FindingPackSize, Key: ref.Key, Detail: fmt.Sprintf("%d bytes, the manifest says %d", info.Size, ref.Size)}, nil
		}
		return nil, &Finding{Code: FindingPackChecksum, Key: ref.Key, Detail: "its BLAKE3 does not match the manifest"}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("remote: verify: %w", err)
	}
	p, err := cas.OpenPack(data)
	if err == nil {
		p = p.WithBases(bases)
		err = p.Verify()
	}
	if err != nil {
		return nil, &Finding{Code: FindingPackCorrupt, Key: ref.Key, Detail: err.Error()}, nil
	}
	return p, nil, nil
}

// incrementMismatch checks that an increment's pack holds its head commit
// and that the commit agrees with the manifest's record of it.
func incrementMismatch(p *cas.Pack, inc Increment) string {
	o, err := p.Get(inc.Head)
	if err != nil {
		return "the pack does not hold the increment's head commit"
	}
	c, err := cas.DecodeCommit(o)
	switch {
	case err != nil:
		return "the increment's head is not a commit"
	case c.Parent != inc.Parent:
		return "the head commit's parent is not the increment's parent"
	case c.Publication != inc.Publication:
		return "the head commit was made by another publication"
	}
	return ""
}

// listOrphans lists what lies under packs/ that no chain references. When
// `current` could not be parsed nothing is known to be referenced, so
// nothing is called an orphan.
func listOrphans(ctx context.Context, store Store, known bool, referenced map[string]bool, rep *Report) error {
	if !known {
		return nil
	}
	objs, err := store.List(ctx, "packs/")
	if err != nil {
		return fmt.Errorf("remote: verify: list packs: %w", err)
	}
	segs, err := store.List(ctx, SegmentsPrefix)
	if err != nil {
		return fmt.Errorf("remote: verify: list segments: %w", err)
	}
	for _, o := range append(objs, segs...) {
		if !referenced[o.Key] && !strings.HasSuffix(o.Key, "/") {
			rep.Orphans = append(rep.Orphans, o)
		}
	}
	return nil
}
