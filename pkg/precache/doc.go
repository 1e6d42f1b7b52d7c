// Package precache holds what the hub and the spoke program share about pre-caching: the
// spec a precache Job pulls (ranv1alpha1.PrecachingSpec, derived on the hub from the managed
// policies and a PreCachingConfig) and the summary the program reports back. The derivation
// is in derive.go; the spoke side, which pulls, is in pkg/precache/pull.
package precache
