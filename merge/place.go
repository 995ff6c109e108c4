package merge

// place moves the runs of changed lines of f (marks cf) to where DESIGN §4
// rule 1 puts them; co are the marks of the other file of the diff. A run
// [s, e) can move down one line when the line after it equals its first
// line (the run then ends one line later and the first line is unchanged
// instead), and up one when the line before it equals its last. Such moves
// keep the diff valid and as short: the unchanged lines still pair up in
// order with the other file's.
//
// Each run is moved as high as it goes, then as low, merging with the runs
// it meets on the way, until its size stops growing. It then stays at the
// bottom unless on the way down its end lined up with a change of the
// other file (the other file has changed lines at the run's position, so
// the two form one replacing hunk): then it goes back to the lowest such
// position.
func place(f []int32, cf, co []bool) {
	n := len(f)
	g := gap{c: co}
	for i := 0; ; {
		for i < n && !cf[i] {
			g.down()
			i++
		}
		if i == n {
			return
		}
		s, e := i, i
		for e < n && cf[e] {
			e++
		}
		var aligned int
		for {
			size := e - s
			for s > 0 && !cf[s-1] && f[s-1] == f[e-1] {
				s, e = s-1, e-1
				cf[s], cf[e] = true, false
				g.up()
				for s > 0 && cf[s-1] {
					s--
				}
			}
			aligned = -1
			if g.changed() {
				aligned = e
			}
			for e < n && !cf[e] && f[s] == f[e] {
				cf[s], cf[e] = false, true
				s, e = s+1, e+1
				g.down()
				for e < n && cf[e] {
					e++
				}
				if g.changed() {
					aligned = e
				}
			}
			if e-s == size {
				break
			}
		}
		for aligned >= 0 && e > aligned {
			s, e = s-1, e-1
			cf[s], cf[e] = true, false
			g.up()
		}
		i = e
	}
}

// gap walks the other file of a diff alongside a run: at is the first
// line after the unchanged lines that pair with those before the run, so
// the other file's changed lines from at on sit at the run's position.
type gap struct {
	c  []bool
	at int
}

// down moves past one more pair: the other file's changed lines at the
// position, then its unchanged line.
func (g *gap) down() {
	for g.at < len(g.c) && g.c[g.at] {
		g.at++
	}
	g.at++
}

// up moves back over one pair.
func (g *gap) up() {
	g.at--
	for g.at > 0 && g.c[g.at-1] {
		g.at--
	}
}

// changed reports whether the other file has changed lines at the position.
func (g *gap) changed() bool { return g.at < len(g.c) && g.c[g.at] }
