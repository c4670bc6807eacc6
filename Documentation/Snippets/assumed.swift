// The contexts of the guides' Swift snippets (Scripts/check-snippets.py): what a guide assumes the reader has,
// declared so that each snippet is type-checked against the package. Never run.

/// A value the guide assumes exists: the reader's own, or one built in an earlier snippet.
func assumed<T>() -> T {
    fatalError("declared for type-checking only")
}
