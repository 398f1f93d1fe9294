//! A counterexample as a Graphviz graph: one column (cluster) per thread with its events in
//! program order, reads-from edges (red, from the write read or from the initial state),
//! coherence edges between successive writes to the same location (blue), dependencies of
//! accesses on loads where the model has them (green, dashed), and under TSO/PSO each buffered
//! store joined to the update that took it to memory (dashed).

use super::{describe, location, overlap, reads_from, thread_label, writes_memory, Symbolizer};
use crate::event::{Op, ThreadId};
use crate::results::Counterexample;

fn quote(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    )
}

pub fn graph(sym: &Symbolizer, cx: &Counterexample) -> String {
    let mut out = String::from(
        "digraph counterexample {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontsize=9];\n",
    );
    out.push_str(&format!(
        "  label={};\n  labelloc=t;\n  init [label=\"initial state\", shape=ellipse];\n",
        quote(&format!("{}: {}", cx.kind.name(), cx.message))
    ));
    let mut threads: Vec<ThreadId> = Vec::new();
    for e in &cx.trace {
        if !threads.contains(&e.thread) {
            threads.push(e.thread);
        }
    }
    for t in &threads {
        out.push_str(&format!(
            "  subgraph cluster_{} {{\n    label={};\n",
            t.0,
            quote(&thread_label(sym, &cx.threads, *t))
        ));
        let mine: Vec<usize> = (0..cx.trace.len())
            .filter(|&i| cx.trace[i].thread == *t)
            .collect();
        for &i in &mine {
            let e = &cx.trace[i];
            let at = location(sym, e);
            let label = format!("#{} {}\n{}", i + 1, describe(sym, cx, e), at);
            out.push_str(&format!(
                "    e{} [label={}];\n",
                i + 1,
                quote(label.trim_end())
            ));
        }
        for w in mine.windows(2) {
            out.push_str(&format!(
                "    e{} -> e{} [weight=10];\n",
                w[0] + 1,
                w[1] + 1
            ));
        }
        out.push_str("  }\n");
    }
    for i in 0..cx.trace.len() {
        match reads_from(cx, i) {
            Some(Some(j)) => out.push_str(&format!(
                "  e{} -> e{} [color=red, fontcolor=red, label=\"rf\", constraint=false];\n",
                j + 1,
                i + 1
            )),
            Some(None) => out.push_str(&format!(
                "  init -> e{} [color=red, fontcolor=red, label=\"rf\", style=dotted];\n",
                i + 1
            )),
            None => {}
        }
    }
    // Coherence: as the model ordered each location's writes, else each memory write to the
    // next overlapping one in the trace.
    for order in &cx.coherence {
        for w in order.windows(2) {
            out.push_str(&format!(
                "  e{} -> e{} [color=blue, fontcolor=blue, label=\"co\", constraint=false];\n",
                w[0] + 1,
                w[1] + 1
            ));
        }
    }
    for &(r, e, kind) in &cx.dependencies {
        out.push_str(&format!(
            "  e{} -> e{} [color=darkgreen, fontcolor=darkgreen, style=dashed, label=\"{kind}\", constraint=false];\n",
            r + 1,
            e + 1
        ));
    }
    // (a graph engine's counterexample gives its coherence order, or has none: weak traces)
    let graph = !cx.sources.is_empty() || !cx.coherence.is_empty();
    for i in 0..cx.trace.len() {
        if graph || !writes_memory(cx, &cx.trace[i]) {
            continue;
        }
        let next = (i + 1..cx.trace.len())
            .find(|&j| writes_memory(cx, &cx.trace[j]) && overlap(&cx.trace[i], &cx.trace[j]));
        if let Some(j) = next {
            out.push_str(&format!(
                "  e{} -> e{} [color=blue, fontcolor=blue, label=\"co\", constraint=false];\n",
                i + 1,
                j + 1
            ));
        }
    }
    // Store buffers: the oldest unmatched store of the owner to the same place.
    let mut matched = vec![false; cx.trace.len()];
    for (i, e) in cx.trace.iter().enumerate() {
        let Op::Update { owner, .. } = e.op else {
            continue;
        };
        let store = (0..i).find(|&j| {
            let s = &cx.trace[j];
            !matched[j]
                && s.thread == owner
                && matches!(s.op, Op::Store { .. } | Op::RmwStore { .. })
                && s.op.data() == e.op.data()
        });
        if let Some(j) = store {
            matched[j] = true;
            out.push_str(&format!(
                "  e{} -> e{} [style=dashed, label=\"buffer\", constraint=false];\n",
                j + 1,
                i + 1
            ));
        }
    }
    out.push_str("}\n");
    out
}
