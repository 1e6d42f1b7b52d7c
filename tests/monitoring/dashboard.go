package monitoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// DatasourceVariable is the dashboard's template variable that picks the Prometheus data
// source; every panel and query reads from it.
const DatasourceVariable = "datasource"

// Dashboard is the part of a Grafana dashboard that the checks read.
type Dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []Panel `json:"panels"`
	Templating    struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// Variable is a template variable.
type Variable struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Query any    `json:"query"`
}

// Panel is a panel, or a row whose Panels are those it holds while collapsed.
type Panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	GridPos     *GridPos    `json:"gridPos"`
	Datasource  *Datasource `json:"datasource"`
	Targets     []Target    `json:"targets"`
	Panels      []Panel     `json:"panels"`
}

// GridPos places a panel.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Datasource names a data source.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is a panel's query.
type Target struct {
	RefID      string      `json:"refId"`
	Expr       string      `json:"expr"`
	Datasource *Datasource `json:"datasource"`
}

// LoadDashboard reads a Grafana dashboard's JSON model.
func LoadDashboard(path string) (*Dashboard, error) {
	d := &Dashboard{}
	if err := load(path, d, json.Unmarshal); err != nil {
		return nil, err
	}
	return d, nil
}

// grafanaVariables are the global variables of Grafana a query may use, with a sample
// value of each to parse the query with.
var grafanaVariables = map[string]string{
	"__interval":      "1m",
	"__interval_ms":   "60000",
	"__rate_interval": "4m",
	"__range":         "1d",
	"__range_s":       "86400",
	"__range_ms":      "86400000",
}

// variable is a Grafana variable in a query: $name or ${name}, ${name:format}. A name starts
// with a letter or _, so that PromQL's own $1 (label_replace) is not one.
var variable = regexp.MustCompile(`\$(?:\{([A-Za-z_]\w*)(?::\w+)?\}|([A-Za-z_]\w*))`)

// ExpandVariables replaces Grafana's global variables ($__rate_interval, $__range, ...) in
// a query with sample values. Any other variable is an error: the dashboard has no variable
// but its data source.
func ExpandVariables(expr string) (string, error) {
	var errs []error
	out := variable.ReplaceAllStringFunc(expr, func(v string) string {
		m := variable.FindStringSubmatch(v)
		name := m[1] + m[2]
		if value, ok := grafanaVariables[name]; ok {
			return value
		}
		errs = append(errs, fmt.Errorf("unknown variable %s", v))
		return v
	})
	return out, errors.Join(errs...)
}

// CheckDashboard checks a dashboard: a data source variable of type prometheus; every panel,
// those of rows included, with a unique id, a title and a place; every panel but rows with a
// description, the data source ${datasource}, and queries that CheckExpr accepts against e
// once Grafana's variables are expanded.
func CheckDashboard(d *Dashboard, e Exported) error {
	var errs []error
	if d.Title == "" || d.UID == "" {
		errs = append(errs, errors.New("the dashboard needs a title and a uid"))
	}
	if !hasDatasourceVariable(d) {
		errs = append(errs, fmt.Errorf("no template variable %q of type datasource for prometheus", DatasourceVariable))
	}
	panels := flatten(d.Panels)
	if len(panels) == 0 {
		errs = append(errs, errors.New("the dashboard has no panel"))
	}
	ids := map[int]bool{}
	for _, p := range panels {
		name := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 || ids[p.ID] {
			errs = append(errs, fmt.Errorf("%s: the id must be positive and unique", name))
		}
		ids[p.ID] = true
		if err := checkPanel(p, e); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func hasDatasourceVariable(d *Dashboard) bool {
	for _, v := range d.Templating.List {
		if v.Name == DatasourceVariable && v.Type == "datasource" && v.Query == "prometheus" {
			return true
		}
	}
	return false
}

// flatten returns the panels with those that collapsed rows hold, after their row.
func flatten(panels []Panel) []Panel {
	var out []Panel
	for _, p := range panels {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

func checkPanel(p Panel, e Exported) error {
	var errs []error
	if strings.TrimSpace(p.Title) == "" {
		errs = append(errs, errors.New("no title"))
	}
	if g := p.GridPos; g == nil || g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
		errs = append(errs, errors.New("no gridPos within the 24 columns"))
	}
	if p.Type == "row" {
		if len(p.Targets) > 0 {
			errs = append(errs, errors.New("a row has no queries"))
		}
		return errors.Join(errs...)
	}
	if strings.TrimSpace(p.Description) == "" {
		errs = append(errs, errors.New("no description"))
	}
	if !fromVariable(p.Datasource) {
		errs = append(errs, fmt.Errorf("the data source is not ${%s}", DatasourceVariable))
	}
	if len(p.Targets) == 0 {
		errs = append(errs, errors.New("no query"))
	}
	for _, t := range p.Targets {
		if err := checkTarget(t, e); err != nil {
			errs = append(errs, fmt.Errorf("query %s: %w", t.RefID, err))
		}
	}
	return errors.Join(errs...)
}

func checkTarget(t Target, e Exported) error {
	if t.Datasource != nil && !fromVariable(t.Datasource) {
		return fmt.Errorf("the data source is not ${%s}", DatasourceVariable)
	}
	expr, err := ExpandVariables(t.Expr)
	if err != nil {
		return err
	}
	return CheckExpr(expr, e)
}

func fromVariable(ds *Datasource) bool {
	return ds != nil && ds.Type == "prometheus" && ds.UID == "${"+DatasourceVariable+"}"
}
