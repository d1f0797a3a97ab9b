"""`chainlit run app.py` from a checkout: the app lives in the installed package (`reqstudio serve`)."""

import reqstudio.web.app  # noqa: F401  (importing it registers the app's handlers with Chainlit)
