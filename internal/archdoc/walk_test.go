package archdoc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The walks of a pull and a commit in docs/architecture.md name packages,
// files and declarations. When code moves, the walk must move with it: a
// file named in a step exists in a package the step names (or, with a
// path, where the path says), and a `pkg.Name` or `pkg.Type.Method` is
// declared in that package. The walk then stays a map a newcomer can
// follow into the code.
func TestWalksNameWhatTheCodeHas(t *testing.T) {
	page := read(t, "docs/architecture.md")
	pkgs := goList(t)
	byLast := map[string][]string{} // last element of a package path → paths
	for p := range pkgs {
		byLast[filepath.Base(p)] = append(byLast[filepath.Base(p)], p)
	}
	decls := map[string]map[string]bool{} // package path → declared names
	declared := func(pkg string) map[string]bool {
		if d, ok := decls[pkg]; ok {
			return d
		}
		d := packageDecls(t, pkg)
		decls[pkg] = d
		return d
	}
	span := regexp.MustCompile("`([^`]+)`")
	goFile := regexp.MustCompile(`^[a-z0-9_/]+\.go$`)
	qualified := regexp.MustCompile(`^([a-z0-9_/]+)\.([A-Z][A-Za-z0-9]*)(?:\.([A-Z][A-Za-z0-9]*))?(?:\(.*\))?$`)
	checked := 0
	for _, section := range []string{"## A pull", "## A commit"} {
		text, ok := sectionOf(page, section)
		if !ok {
			t.Fatalf("docs/architecture.md has no section %q", section)
		}
		for _, step := range steps(text) {
			var named []string // packages this step names, in order
			for _, m := range span.FindAllStringSubmatch(step, -1) {
				s := m[1]
				_, isPkg := pkgs[s]
				switch {
				case isPkg:
					named = append(named, s)
				case goFile.MatchString(s):
					checked++
					if strings.Contains(s, "/") {
						if _, err := os.Stat(filepath.Join("..", "..", s)); err != nil {
							t.Errorf("%s names %s, which does not exist", section, s)
						}
						continue
					}
					if !fileInOneOf(s, named) {
						t.Errorf("%s: step %q names %s, which is in none of the packages the step names before it (%v)",
							section, firstWords(step), s, named)
					}
				case qualified.MatchString(s):
					q := qualified.FindStringSubmatch(s)
					candidates := []string{q[1]}
					if !strings.Contains(q[1], "/") {
						candidates = byLast[q[1]]
					}
					if len(candidates) == 0 {
						t.Errorf("%s names %s: no package %s", section, s, q[1])
						continue
					}
					checked++
					want := q[2]
					if q[3] != "" {
						want = q[2] + "." + q[3]
					}
					found := false
					for _, c := range candidates {
						found = found || declared(c)[want]
					}
					if !found {
						t.Errorf("%s names %s, which package %s does not declare", section, s, q[1])
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d files and declarations checked in the walks: has the page's form changed?", checked)
	}
}

// sectionOf returns the text under heading, up to the next heading of
// the same level.
func sectionOf(page, heading string) (string, bool) {
	i := strings.Index(page, "\n"+heading+"\n")
	if i < 0 {
		return "", false
	}
	rest := page[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest, true
}

// steps splits a walk into its numbered steps (and paragraphs).
func steps(text string) []string {
	var out []string
	var cur strings.Builder
	numbered := regexp.MustCompile(`^\d+\. `)
	for _, line := range strings.Split(text, "\n") {
		if numbered.MatchString(line) || strings.TrimSpace(line) == "" {
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		}
		cur.WriteString(line + "\n")
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func firstWords(step string) string {
	f := strings.Fields(step)
	return strings.Join(f[:min(len(f), 6)], " ")
}

// fileInOneOf reports whether a file named name is in one of pkgs.
func fileInOneOf(name string, pkgs []string) bool {
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join("..", "..", p, name)); err == nil {
			return true
		}
	}
	return false
}

// packageDecls returns the names a package declares in its non-test
// files: functions, types, variables and constants by name, methods and
// struct fields as Type.Name, and a method also by its bare name (a walk
// may say `remote.CatchUp` for the notebook's method).
func packageDecls(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	dir := filepath.Join("..", "..", pkg)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				out[d.Name.Name] = true
				if d.Recv != nil && len(d.Recv.List) == 1 {
					out[receiverName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									out[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

func receiverName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}
