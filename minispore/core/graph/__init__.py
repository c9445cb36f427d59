"""Graph mode: IR (ir.py), the graph builder (builder.py), the source parser (parser.py), passes
(passes/), the compile pipeline and its cache (compile.py), and the O0 executor (execute.py)."""
