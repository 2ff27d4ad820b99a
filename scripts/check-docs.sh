#!/usr/bin/env bash
# Builds the DocC catalog of every library module with --warnings-as-errors: a broken symbol link, a missing
# catalog or an undocumented topic fails. Works without the swift-docc-plugin: symbol graphs come from
# `swift package dump-symbol-graph`, then `docc convert` gets each module's graph as an additional directory.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=(FeatureGate FeatureGateConfig NoopRuntime FeatureGateIAB FeatureGateRemote FeatureGateStack)
output=${DOCS_OUTPUT:-$(mktemp -d)}

if ! dump_log=$(swift package dump-symbol-graph --minimum-access-level public 2>&1); then
    echo "$dump_log"; echo "error: swift package dump-symbol-graph failed"; exit 1
fi
graphs=$(find .build -type d -name symbolgraph -path "*$(uname -m)*" | head -n 1)
[[ -d "$graphs" ]] || { echo "no symbol graphs found under .build"; exit 1; }

status=0
for module in "${modules[@]}"; do
    catalog="Sources/$module/$module.docc"
    if [[ ! -d "$catalog" ]]; then
        echo "error: $module has no DocC catalog at $catalog"; status=1; continue
    fi
    module_graphs=$(mktemp -d)
    cp "$graphs/$module.symbols.json" "$module_graphs/"
    # Extensions of other modules' types live in MODULE@OTHER.symbols.json.
    find "$graphs" -name "$module@*.symbols.json" -exec cp {} "$module_graphs/" \;
    if docc convert "$catalog" \
        --additional-symbol-graph-dir "$module_graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.featuregate.$module" \
        --output-path "$output/$module.doccarchive" \
        --warnings-as-errors; then
        echo "$module: documentation builds with no warnings"
    else
        echo "error: $module: documentation has warnings or errors"; status=1
    fi
    rm -rf "$module_graphs"
done
exit $status
