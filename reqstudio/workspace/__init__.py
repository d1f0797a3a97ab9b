"""Requirements as items: a document (Markdown SRS, text, .pdf, .docx) or a ReqIF file read into
items with a human id, a machine id, text, section path, kind, attributes and links
(`reqstudio.workspace.items`); ReqIF 1.2 in and out (`reqif_in`, `reqif_out`); a diff of two
versions that marks changes of meaning (`diff`); a user's projects, their items with ids kept
from one import to the next (`stable_ids`) and frozen baselines, in the app's database
(`store`, its tables in `store_schema`; the commands in `store_cli`)."""
