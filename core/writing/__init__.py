"""Writing a section: the prompt and the writer backends.

Second stage of the pipeline: the frozen source set and the section skeleton become a prompt;
a writer (Perplexity's Agent API, legacy Sonar chat completions or any OpenAI-compatible
endpoint) returns a draft and its own search results, which reconciling then checks."""
