// Package controllers holds the reconcilers of cgu-operator, one file set per kind:
// <kind>_controller.go (Reconcile and SetupWithManager), <kind>_phases.go and
// <kind>_status.go. Reconcilers stay thin: they gather facts, call the pure decision code
// in pkg/, and apply its intents through the adapters in pkg/.
package controllers
