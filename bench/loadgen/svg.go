package main

import (
	"fmt"
	"math"
	"strings"
)

// A tiny line-chart renderer: the report's charts are drawn here, with no
// plotting dependency. Charts are plain SVG 1.1 with a white background so
// that they read the same in light and dark viewers.

type series struct {
	Name   string
	X, Y   []float64
	Dots   bool // mark each point (few points); otherwise a line only
	Dashed bool // a reference (a target), not a measurement
}

type chart struct {
	Title, XLabel, YLabel string
	LogX                  bool
	Series                []series
}

const (
	chartW, chartH                     = 820, 420
	marginL, marginR, marginT, marginB = 70, 300, 40, 50
	plotW, plotH                       = chartW - marginL - marginR, chartH - marginT - marginB
	chartFont                          = `font-family="sans-serif" font-size="12"`
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// svg renders the chart. Y starts at 0; X is linear or log10.
func (c chart) svg() []byte {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range c.Series {
		for i := range s.X {
			xmin, xmax, ymax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i]), math.Max(ymax, s.Y[i])
		}
	}
	if math.IsInf(xmin, 0) { // no data
		xmin, xmax = 0, 1
	}
	if !c.LogX {
		xmin = math.Min(xmin, 0)
	}
	fx := func(x float64) float64 { return x }
	if c.LogX {
		fx = math.Log10
		xmin, xmax = math.Pow(10, math.Floor(math.Log10(xmin))), math.Pow(10, math.Ceil(math.Log10(xmax)))
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	ytop, ystep := niceScale(ymax)
	px := func(x float64) float64 { return marginL + (fx(x)-fx(xmin))/(fx(xmax)-fx(xmin))*plotW }
	py := func(y float64) float64 { return marginT + plotH - y/ytop*plotH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartW, chartH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-family="sans-serif" font-size="15" font-weight="bold">%s</text>`+"\n", marginL, esc(c.Title))
	// grid and Y ticks
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", marginL, marginL+plotW, py(y), py(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" %s text-anchor="end">%s</text>`+"\n", marginL-6, py(y)+4, chartFont, tickLabel(y))
	}
	// X ticks
	for _, x := range xTicks(xmin, xmax, c.LogX) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#999"/>`+"\n", px(x), px(x), marginT+plotH, marginT+plotH+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle">%s</text>`+"\n", px(x), marginT+plotH+18, chartFont, tickLabel(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", marginL, marginT, plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s text-anchor="middle">%s</text>`+"\n", marginL+plotW/2, chartH-10, chartFont, esc(c.XLabel))
	fmt.Fprintf(&b, `<text x="16" y="%d" %s text-anchor="middle" transform="rotate(-90 16 %d)">%s</text>`+"\n", marginT+plotH/2, chartFont, marginT+plotH/2, esc(c.YLabel))
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		var pts []string
		for j := range s.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.X[j]), py(s.Y[j])))
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", col, dash, strings.Join(pts, " "))
		if s.Dots {
			for j := range s.X {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %s</title></circle>`+"\n", px(s.X[j]), py(s.Y[j]), col, esc(s.Name), tickLabel(s.Y[j]))
			}
		}
		ly := marginT + 10 + i*20
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"%s/>`+"\n", marginL+plotW+12, marginL+plotW+32, ly, ly, col, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s>%s</text>`+"\n", marginL+plotW+38, ly+4, chartFont, esc(s.Name))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// niceScale returns an axis top >= max and a step of 1, 2 or 5 x 10^k
// giving 4 to 10 intervals.
func niceScale(max float64) (top, step float64) {
	if max <= 0 {
		return 1, 0.25
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	return math.Ceil(max/step) * step, step
}

func xTicks(min, max float64, log bool) []float64 {
	var ts []float64
	if log {
		for x := min; x <= max*1.0001; x *= 10 {
			ts = append(ts, x)
		}
		return ts
	}
	_, step := niceScale(max - min)
	for x := math.Ceil(min/step) * step; x <= max+step/1e6; x += step {
		ts = append(ts, x)
	}
	return ts
}

func tickLabel(v float64) string {
	switch {
	case v >= 1000 && v == math.Trunc(v):
		s := fmt.Sprintf("%.0f", v)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
	}
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
