"""ReqStudio core: settings, the model factory, structured output, usage, prompts, CLI."""
