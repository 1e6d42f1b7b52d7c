package precache

// Exit codes of the precache program: the Job's hub side tells a failure worth retrying
// from one that is not.
const (
	// ExitOK: every image is on the node.
	ExitOK = 0
	// ExitRetryable: some images could not be pulled for a reason that may pass (the
	// registry unreachable or answering 5xx, a timeout).
	ExitRetryable = 2
	// ExitUnrecoverable: the spec cannot be carried out (it does not decode, an image does
	// not exist, a catalog has no such package or channel, too little space).
	ExitUnrecoverable = 3
)

// SummaryKey is the key of the summary in the report ConfigMap.
const SummaryKey = "summary.json"

// Summary is what the precache program reports, in the report ConfigMap while it runs and
// when it ends, and as its termination message.
type Summary struct {
	// Run is the run the program was started for, as the hub named it.
	Run string `json:"run"`
	// Phase is Resolving (listing the images), Pulling, Succeeded or Failed.
	Phase string `json:"phase"`
	// Images is how many images the spec resolved to, after excludes.
	Images int `json:"images"`
	// Present were on the node already; Pulled were pulled by this run.
	Present int `json:"present"`
	Pulled  int `json:"pulled"`
	// Excluded were dropped by the exclude patterns.
	Excluded int `json:"excluded"`
	// ToPull is the size of what this run pulls: the manifests, configs and layers of the
	// images not on the node, known once the Pulling phase begins, before any image is pulled.
	// A plan of the fleet's pre-caching against bandwidth reads it.
	ToPull int64 `json:"toPull,omitempty"`
	// Bytes is the size of what this run pulled.
	Bytes int64 `json:"bytes"`
	// Failed names the images that could not be pulled, at most MaxListed.
	Failed []string `json:"failed,omitempty"`
	// Error says why the run failed, when it did; Retryable tells whether another run may
	// succeed.
	Error     string `json:"error,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
}

// Phases of a Summary.
const (
	PhaseResolving = "Resolving"
	PhasePulling   = "Pulling"
	PhaseSucceeded = "Succeeded"
	PhaseFailed    = "Failed"
)

// MaxListed bounds the images a Summary names, so that it fits a termination message
// (4 KiB) and a ConfigMap comfortably.
const MaxListed = 10
