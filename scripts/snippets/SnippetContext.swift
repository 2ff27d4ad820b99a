// Nothing: every README and DocC snippet compiles against the library plus only the names it declares itself
// (small, visibly app-owned stand-ins). scripts/check-snippets.sh still imports this module into every snippet, so
// a name added here would be visible to all of them: keep it empty.
