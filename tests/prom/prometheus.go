package prom

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// PrometheusOptions configure a Prometheus server.
type PrometheusOptions struct {
	// Dir holds the configuration, the rule file, the storage and the server's output
	// (prometheus.log); it must exist, for example t.TempDir().
	Dir string
	// Interval is how often targets are scraped and rules evaluated (default 1s).
	Interval time.Duration
	// Targets are the host:port endpoints scraped at /metrics, one scrape job each, named
	// "target-<index>". The labels a target serves win over the job's (honor_labels), so a
	// series keeps the cluster label the spoke simulator gives it.
	Targets []string
	// Rules is a Prometheus rules file (YAML: groups of recording and alerting rules); empty
	// for none.
	Rules string
	// Alertmanager is the URL of an Alertmanager that firing alerts are sent to, for example
	// Alertmanager.URL(); empty for none.
	Alertmanager string
}

// Prometheus is a running Prometheus server.
type Prometheus struct {
	proc *process
}

// StartPrometheus writes a configuration into opts.Dir and runs Prometheus with it on a free
// loopback port, with the lifecycle API on, and waits until it is ready (bounded by ctx and 30
// seconds). The binary is $PROMETHEUS, else prometheus on the PATH.
func StartPrometheus(ctx context.Context, opts PrometheusOptions) (*Prometheus, error) {
	path, err := findBinary("PROMETHEUS", "prometheus")
	if err != nil {
		return nil, err
	}
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	config, err := prometheusConfig(opts)
	if err != nil {
		return nil, err
	}
	configPath := filepath.Join(opts.Dir, "prometheus.yml")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		return nil, fmt.Errorf("writing the Prometheus configuration: %w", err)
	}
	addr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	p := &Prometheus{proc: &process{
		name: "prometheus", path: path, addr: addr, logPath: filepath.Join(opts.Dir, "prometheus.log"),
		args: []string{
			"--config.file=" + configPath,
			"--storage.tsdb.path=" + filepath.Join(opts.Dir, "data"),
			"--web.listen-address=" + addr,
			"--web.enable-lifecycle",
		},
	}}
	if err := p.proc.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// URL returns the server's address, "http://127.0.0.1:<port>".
func (p *Prometheus) URL() string { return p.proc.url() }

// Down stops the server, as when the metrics endpoint a gate queries goes down; Up starts it
// again. It returns an error when the server had exited by itself.
func (p *Prometheus) Down() error { return p.proc.stop() }

// Up starts a stopped server again on the same port, configuration and storage, and waits
// until it is ready.
func (p *Prometheus) Up(ctx context.Context) error { return p.proc.start(ctx) }

// Stop stops the server for good (a test's cleanup). It returns an error when the server had
// exited by itself.
func (p *Prometheus) Stop() error { return p.proc.stop() }

// configFile is the part of Prometheus's configuration file that tests set.
type configFile struct {
	Global        globalConfig   `json:"global"`
	RuleFiles     []string       `json:"rule_files,omitempty"`
	Alerting      *alerting      `json:"alerting,omitempty"`
	ScrapeConfigs []scrapeConfig `json:"scrape_configs,omitempty"`
}

type globalConfig struct {
	ScrapeInterval     string `json:"scrape_interval"`
	EvaluationInterval string `json:"evaluation_interval"`
}

type alerting struct {
	Alertmanagers []alertmanagerConfig `json:"alertmanagers"`
}

type alertmanagerConfig struct {
	Scheme        string         `json:"scheme"`
	PathPrefix    string         `json:"path_prefix,omitempty"`
	StaticConfigs []staticConfig `json:"static_configs"`
}

type scrapeConfig struct {
	JobName       string         `json:"job_name"`
	MetricsPath   string         `json:"metrics_path"`
	HonorLabels   bool           `json:"honor_labels"`
	StaticConfigs []staticConfig `json:"static_configs"`
}

type staticConfig struct {
	Targets []string `json:"targets"`
}

// prometheusConfig returns the configuration file of opts, and writes its rule file.
func prometheusConfig(opts PrometheusOptions) ([]byte, error) {
	interval := model.Duration(opts.Interval).String()
	c := configFile{Global: globalConfig{ScrapeInterval: interval, EvaluationInterval: interval}}
	for i, target := range opts.Targets {
		c.ScrapeConfigs = append(c.ScrapeConfigs, scrapeConfig{
			JobName: fmt.Sprintf("target-%d", i), MetricsPath: "/metrics", HonorLabels: true,
			StaticConfigs: []staticConfig{{Targets: []string{target}}},
		})
	}
	if opts.Rules != "" {
		rules := filepath.Join(opts.Dir, "rules.yml")
		if err := os.WriteFile(rules, []byte(opts.Rules), 0o600); err != nil {
			return nil, fmt.Errorf("writing the Prometheus rules: %w", err)
		}
		c.RuleFiles = []string{rules}
	}
	if opts.Alertmanager != "" {
		u, err := url.Parse(opts.Alertmanager)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("alertmanager URL %q: want scheme://host:port", opts.Alertmanager)
		}
		c.Alerting = &alerting{Alertmanagers: []alertmanagerConfig{{
			Scheme: u.Scheme, PathPrefix: u.Path, StaticConfigs: []staticConfig{{Targets: []string{u.Host}}},
		}}}
	}
	return yaml.Marshal(c)
}

// Query asks the Prometheus at baseURL for the instant value of a PromQL expression and returns
// the API's JSON answer ({"status":"success","data":{"resultType":...,"result":...}}); an answer
// other than 200 is an error.
func Query(ctx context.Context, baseURL, promql string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/api/v1/query", nil)
	if err != nil {
		return nil, err
	}
	req.URL.RawQuery = url.Values{"query": {promql}}.Encode()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("querying %s: %w", baseURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", baseURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("query %q: %s: %s", promql, resp.Status, body)
	}
	return body, nil
}

// Values asks the Prometheus at baseURL for the instant value of a PromQL expression and
// returns the value of each series, keyed by the values of labels joined by spaces.
func Values(ctx context.Context, baseURL, promql string, labels ...string) (map[string]float64, error) {
	body, err := Query(ctx, baseURL, promql)
	if err != nil {
		return nil, err
	}
	var answer struct {
		Data struct {
			Result model.Vector `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", body, err)
	}
	out := map[string]float64{}
	for _, s := range answer.Data.Result {
		key := make([]string, len(labels))
		for i, l := range labels {
			key[i] = string(s.Metric[model.LabelName(l)])
		}
		out[strings.Join(key, " ")] = float64(s.Value)
	}
	return out, nil
}
