"""Where Chainlit keeps the files of a thread (downloads, uploaded references, charts).

Chainlit's SQLAlchemy data layer persists each element through a storage client
(`chainlit.data.storage_clients`) and, when a thread is opened, asks that client for a URL
to read it from. Three back ends, picked by REQSTUDIO_STORAGE (auto by default):

- local: a folder in the data directory (auto with the embedded SQLite history);
- database: a table of the history database (auto with PostgreSQL and no bucket), so that
  instances sharing one PostgreSQL serve each other's files with nothing more to set up;
- s3: any S3-compatible store (auto when REQSTUDIO_S3_BUCKET is set); the browser downloads
  through presigned URLs.

Local and database files are served by the app at /reqstudio/files/<key> with a signed,
expiring URL (as S3 presigns), signed with CHAINLIT_AUTH_SECRET, which instances share.
Every back end refuses on the way in a file over REQSTUDIO_FILE_MAX_MB or of a content type
outside REQSTUDIO_FILE_TYPES, and says so in one log line.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import hmac
import json
import logging
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from chainlit.data.storage_clients.base import BaseStorageClient, storage_expiry_time
from sqlalchemy import text

from reqstudio.persistence import is_postgres
from reqstudio.pools import OnDataEngine, first_row
from reqstudio.schema import prepare_schema
from reqstudio.settings import Settings, SettingsError

log = logging.getLogger("reqstudio")

FILES_ROUTE = "/reqstudio/files"
MB = 1024 * 1024
FILES_LOCK_KEY = 0x52514649  # the file table's total is checked and written under this lock


class FileNotStored(Exception):
    """A file the store refused (too big, a content type not allowed) or could not take (the
    store is unavailable). The message is one line for the log."""


def safe_key(object_key: str) -> str:
    """Chainlit keys a file `<user id>/<element id>/<name>`, the name as the browser gave it
    (`../../evil.md`): the key keeps the base name only, so that no store, path or URL sees
    a `..` segment. Chainlit records the key the store returns."""
    from reqstudio.modes.srs.documents import display_name

    head, _, name = object_key.partition("/")
    element, _, name = name.partition("/")
    return "/".join(part for part in (head, element, display_name(name) if name else "") if part)


class CheckedStorage(BaseStorageClient):
    """The checks every back end makes on the way in."""

    kind = ""

    def __init__(self, max_mb: float, allowed_types: tuple[str, ...]):
        self.max_mb = max_mb
        self.allowed_types = allowed_types

    def check(self, object_key: str, data: bytes | str, mime: str) -> tuple[str, bytes]:
        """The key to store under and the bytes, or FileNotStored."""
        object_key = safe_key(object_key)
        content = data.encode() if isinstance(data, str) else bytes(data)
        name = object_key.rsplit("/", 1)[-1]
        if len(content) > self.max_mb * MB:
            raise FileNotStored(
                f"file {name!r} not stored: {len(content) / MB:.2f} MB is over the "
                f"{self.max_mb:g} MB limit (REQSTUDIO_FILE_MAX_MB)"
            )
        base_type = (mime or "").split(";")[0].strip().lower()
        if not any(fnmatch.fnmatch(base_type, pattern) for pattern in self.allowed_types):
            raise FileNotStored(
                f"file {name!r} not stored: content type {mime!r} is not allowed "
                "(REQSTUDIO_FILE_TYPES)"
            )
        return object_key, content

    async def upload_file(
        self,
        object_key: str,
        data: bytes | str,
        mime: str = "application/octet-stream",
        overwrite: bool = True,
        content_disposition: str | None = None,
    ) -> dict[str, Any]:
        object_key, content = self.check(object_key, data, mime)
        return await self.store(object_key, content, mime)

    async def store(self, object_key: str, content: bytes, mime: str) -> dict[str, Any]:
        """Keep the checked file (FileNotStored when it cannot); what Chainlit records of it."""
        raise NotImplementedError

    async def close(self) -> None:
        return None


# --- signed URLs for the back ends the app serves itself --------------------------------------


def _secret() -> bytes:
    secret = os.environ.get("CHAINLIT_AUTH_SECRET")
    if not secret:
        raise RuntimeError("CHAINLIT_AUTH_SECRET is not set (ensure_auth_secret sets it)")
    return secret.encode()


def _signature(object_key: str, expires: int) -> str:
    # labelled, so that no signature made here is valid for anything else signed with the secret
    signed = f"reqstudio-file\n{object_key}\n{expires}".encode()
    return hmac.new(_secret(), signed, hashlib.sha256).hexdigest()


def files_route() -> str:
    """The route's path, under `chainlit run --root-path` when the app is served below one."""
    from chainlit.config import config

    return f"{config.run.root_path.rstrip('/')}{FILES_ROUTE}"


def signed_url(object_key: str, lifetime: int = storage_expiry_time) -> str:
    expires = int(time.time()) + lifetime
    return (
        f"{files_route()}/{quote(object_key, safe='/')}"
        f"?expires={expires}&signature={_signature(object_key, expires)}"
    )


def signature_valid(object_key: str, expires: str, signature: str) -> bool:
    try:
        until = int(expires)
    except ValueError:
        return False
    return until >= time.time() and hmac.compare_digest(_signature(object_key, until), signature)


class AppServedStorage(CheckedStorage):
    """A back end whose files the app itself serves (`read` gives the bytes back)."""

    async def get_read_url(self, object_key: str) -> str:
        return signed_url(object_key)

    async def read(self, object_key: str) -> tuple[bytes, str] | None:
        raise NotImplementedError


class LocalDiskStorage(AppServedStorage):
    """Files in a folder of this machine: one instance, the embedded default."""

    kind = "local"

    def __init__(self, folder: Path, max_mb: float, allowed_types: tuple[str, ...]):
        super().__init__(max_mb, allowed_types)
        self.folder = folder

    def _path(self, object_key: str) -> Path:
        # Keys hold names users gave (`../x.md`): the file is named by the key's digest.
        return self.folder / hashlib.sha256(object_key.encode()).hexdigest()

    def _write(self, object_key: str, content: bytes, mime: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(object_key)
        partial = path.with_suffix(".partial")
        partial.write_bytes(content)
        path.with_suffix(".json").write_text(json.dumps({"key": object_key, "mime": mime}))
        partial.replace(path)

    async def store(self, object_key: str, content: bytes, mime: str) -> dict[str, Any]:
        try:
            await asyncio.to_thread(self._write, object_key, content, mime)
        except OSError as error:
            raise FileNotStored(f"file store unavailable: {error}") from None
        return {"object_key": object_key}  # links are signed when a thread is read

    def _read(self, object_key: str) -> tuple[bytes, str] | None:
        path = self._path(object_key)
        try:
            meta = json.loads(path.with_suffix(".json").read_text())
            return path.read_bytes(), meta.get("mime") or "application/octet-stream"
        except (OSError, ValueError):
            return None

    async def read(self, object_key: str) -> tuple[bytes, str] | None:
        return await asyncio.to_thread(self._read, object_key)

    async def delete_file(self, object_key: str) -> bool:
        path = self._path(object_key)
        for each in (path, path.with_suffix(".json")):
            each.unlink(missing_ok=True)
        return True


class DatabaseStorage(OnDataEngine, AppServedStorage):
    """Files in a table of the history database, each at most `max_mb` and all together at
    most `table_max_mb`: several instances on one PostgreSQL serve each other's files."""

    kind = "database"

    def __init__(
        self,
        database_url: str,
        max_mb: float,
        allowed_types: tuple[str, ...],
        table_max_mb: float,
    ):
        super().__init__(max_mb, allowed_types)
        self.database_url = database_url
        self.table_max_mb = table_max_mb

    async def create_table(self) -> None:
        """The database's tables, `stored_files` among them (`reqstudio.schema`)."""
        async with self.engine.begin() as connection:
            await prepare_schema(connection)

    async def store(self, object_key: str, content: bytes, mime: str) -> dict[str, Any]:
        try:
            async with self.engine.begin() as connection:
                if is_postgres(self.database_url):  # instances writing at once take turns
                    await connection.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"), {"key": FILES_LOCK_KEY}
                    )
                held = (
                    await connection.execute(
                        text(
                            'SELECT COALESCE(SUM("size"), 0) FROM stored_files '
                            'WHERE "objectKey" <> :key'
                        ),
                        {"key": object_key},
                    )
                ).scalar_one()
                if held + len(content) > self.table_max_mb * MB:
                    raise FileNotStored(
                        f"file {object_key.rsplit('/', 1)[-1]!r} not stored: the file table "
                        f"holds {held / MB:.2f} MB of its {self.table_max_mb:g} MB "
                        "(REQSTUDIO_DATABASE_FILES_MAX_MB)"
                    )
                await connection.execute(
                    text(
                        'INSERT INTO stored_files ("objectKey", "mime", "size", "content", '
                        '"createdAt") VALUES (:key, :mime, :size, :content, :at) '
                        'ON CONFLICT ("objectKey") DO UPDATE SET "mime" = :mime, '
                        '"size" = :size, "content" = :content, "createdAt" = :at'
                    ),
                    {
                        "key": object_key,
                        "mime": mime,
                        "size": len(content),
                        "content": content,
                        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    },
                )
        except FileNotStored:
            raise
        except Exception as error:
            raise FileNotStored(
                f"file store unavailable: {type(error).__name__}: {error}".splitlines()[0]
            ) from None
        return {"object_key": object_key}  # links are signed when a thread is read

    async def read(self, object_key: str) -> tuple[bytes, str] | None:
        async with self.engine.connect() as connection:
            row = await first_row(
                connection,
                'SELECT "content", "mime" FROM stored_files WHERE "objectKey" = :key',
                {"key": object_key},
            )
        return (bytes(row[0]), row[1]) if row else None

    async def delete_file(self, object_key: str) -> bool:
        async with self.engine.begin() as connection:
            await connection.execute(
                text('DELETE FROM stored_files WHERE "objectKey" = :key'), {"key": object_key}
            )
        return True

    async def close(self) -> None:
        await self.dispose_engine()


def s3_storage(settings: Settings, max_mb: float, allowed_types: tuple[str, ...]):
    """Chainlit's S3 client with the same checks; boto3 reads region and keys from the
    standard AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION)."""
    try:
        from chainlit.data.storage_clients.s3 import S3StorageClient
    except ImportError:
        raise SettingsError(
            "Thread files in S3 (REQSTUDIO_S3_BUCKET) need boto3: install the s3 extra "
            "(pip install -e '.[s3]', or EXTRAS=s3 ./scripts/setup.sh)"
        ) from None

    class S3Storage(CheckedStorage, S3StorageClient):
        kind = "s3"

        def __init__(self) -> None:
            CheckedStorage.__init__(self, max_mb, allowed_types)
            kwargs = {"endpoint_url": settings.s3_endpoint_url} if settings.s3_endpoint_url else {}
            S3StorageClient.__init__(self, settings.s3_bucket, **kwargs)

        async def store(self, object_key: str, content: bytes, mime: str) -> dict[str, Any]:
            return await asyncio.to_thread(self._put, object_key, content, mime)

        def _put(self, object_key: str, content: bytes, mime: str) -> dict[str, Any]:
            try:
                self.client.put_object(
                    Bucket=self.bucket, Key=object_key, Body=content, ContentType=mime
                )
            except Exception as error:  # botocore's errors: endpoint down, bucket missing
                raise FileNotStored(
                    f"file store unavailable: {type(error).__name__}: {error}".splitlines()[0]
                ) from None
            return {"object_key": object_key, "url": self.sync_get_read_url(object_key)}

        async def close(self) -> None:
            self.client.close()

    return S3Storage()


def storage_kind(settings: Settings) -> str:
    if settings.storage != "auto":
        return settings.storage
    if settings.s3_bucket:
        return "s3"
    return "database" if settings.database_url and is_postgres(settings.database_url) else "local"


def make_storage(settings: Settings) -> CheckedStorage:
    max_mb, types = settings.file_max_mb, settings.file_type_list
    kind = storage_kind(settings)
    if kind == "s3":
        return s3_storage(settings, max_mb, types)
    if kind == "database":
        return DatabaseStorage(
            settings.resolved_database_url, max_mb, types, settings.database_files_max_mb
        )
    return LocalDiskStorage(settings.data_dir / "files", max_mb, types)


async def prepare_storage(storage: CheckedStorage) -> None:
    if isinstance(storage, DatabaseStorage):
        await storage.create_table()


def stored_files_route(storage: CheckedStorage):
    """`GET /reqstudio/files/<key>?expires=..&signature=..` for the back ends the app serves
    (None for the others, which serve their own links)."""
    if not isinstance(storage, AppServedStorage):
        return None
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    async def stored_file(request: Request) -> Response:
        key = request.path_params["key"]
        query = request.query_params
        if not signature_valid(key, query.get("expires", ""), query.get("signature", "")):
            return PlainTextResponse("link expired or not valid", status_code=403)
        try:
            found = await storage.read(key)
        except Exception as error:
            log.warning("file store unavailable: %s", str(error).splitlines()[0])
            return PlainTextResponse("file store unavailable", status_code=503)
        if found is None:
            return PlainTextResponse("not found", status_code=404)
        content, mime = found
        name = key.rsplit("/", 1)[-1]
        return Response(
            content,
            media_type=mime,
            headers={
                # a download, never a page of this origin (no HTML or script runs from here)
                "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}",
                "X-Content-Type-Options": "nosniff",
                "Cache-Control": "private, max-age=300",
            },
        )

    return Route(files_route() + "/{key:path}", stored_file, methods=["GET"])
