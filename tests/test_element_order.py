"""A message's files in the order the app lists them: ids that sort in the order they were
made, and a thread read back with each message's files in that order (reqstudio/web/element_order.py)."""

from __future__ import annotations

import uuid

from reqstudio.web.element_order import in_creation_order, is_ordered, ordered_id


def test_ids_made_one_after_another_sort_that_way_even_in_one_millisecond():
    made = [ordered_id() for _ in range(500)]
    assert sorted(made) == made and len(set(made)) == 500
    assert all(uuid.UUID(i).version == 7 and is_ordered(i) for i in made)
    assert not is_ordered(str(uuid.uuid4())) and not is_ordered("not an id")


def test_a_thread_lists_each_message_s_files_in_the_order_they_were_made():
    md, docx, csv, log = (ordered_id() for _ in range(4))
    upload_a, upload_b = str(uuid.uuid4()), str(uuid.uuid4())
    stored = [  # as the database handed them back: in the order their writes landed
        {"id": upload_b, "forId": "question", "name": "b.md"},
        {"id": log, "forId": "srs", "name": "srs-log.json"},
        {"id": docx, "forId": "srs", "name": "srs.docx"},
        {"id": upload_a, "forId": "question", "name": "a.md"},
        {"id": md, "forId": "srs", "name": "srs.md"},
        {"id": csv, "forId": "srs", "name": "srs-trace.csv"},
    ]
    names = [e["name"] for e in in_creation_order(stored)]
    # the user's uploads (Chainlit's ids) keep the order they came in
    assert names == ["b.md", "a.md", "srs.md", "srs.docx", "srs-trace.csv", "srs-log.json"]
