// Package pull is the spoke side of pre-caching: it turns a precaching spec into the list of
// images the upgrade needs (Resolve) and pulls the missing ones into the node's image store
// (Pull), reporting progress as a precache.Summary.
//
// Resolve reads the release payload's release-manifests/image-references and the file-based
// catalogs of the operator index images through a Source; Pull writes through a Store: the
// node's containers storage through podman in production (Podman), or an OCI image layout
// directory in tests and demos (OCILayout). The precache program's pull command wires them.
//
// Errors say whether another run may succeed (IsRetryable): an unreachable registry, a
// timeout or a server error may pass; a missing image, package or channel, a spec that does
// not decode or too little space will not.
package pull
