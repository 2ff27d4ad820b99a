// The size probes' baseline: a program that links no FeatureGate module (see report.py, "Binary size per module").
print(CommandLine.arguments.count > 1)
