"""`DPAggregates`: the releasable artifact of a DP fit (the privacy boundary).

It holds the public :class:`~dpsynth.schema.Schema`, the DP record count,
the :class:`~dpsynth.accounting.PrivacySpent` of the release, and the DP
measurements themselves, in either or both of two forms:

- **sparse combination counts** (the SDS release): for every length
  ``k = 1..R`` the released k-tuples of (column, value) attributes and their
  normalised DP counts (suppressed combinations are absent);
- **dense noisy marginals** (:class:`NoisyMarginal`): a full noisy table over
  a set of columns with its noise variance, or the noisy coordinates of one
  of its residuals (``basis="residual"``; workload-aware releases).

Everything in it is declared by the user, output by an accounted DP
mechanism, or computed from those two, so it can be saved, shared, and used
to synthesize data with no access to the private table.  Files are JSON or
CSV (never pickle) and are validated on load.
"""

import csv
import hashlib
import io
import json
import os
import sys

import numpy as np
import pandas as pd

from .accounting import PrivacySpent
from .model.marginal import NoisyMarginal
from .model.tuples import sub_tuple_counts
from .preprocessing import TableEncoder
from .schema import Schema
from .utils._files import atomic_write

__all__ = ["DPAggregates", "NoisyMarginal"]

_FORMAT = "dpsynth-aggregates"
_VERSION = 4  # 3: checksum; CSV labels escaped.  4: other values (schema version 3)
_READABLE_VERSIONS = (1, 2, 3, 4)
_MISSING_TOKEN = "<missing>"
_OTHER_TOKEN = "<other>"
_ESCAPE = "\\"


def _checksum(metadata, body=""):
    """SHA-256 of the canonical metadata (without its checksum) and the CSV body."""
    canonical = json.dumps({k: v for k, v in metadata.items() if k != "checksum"},
                           sort_keys=True, separators=(",", ":"), default=_json_default,
                           allow_nan=False)
    body = body.rstrip("\r\n")  # trailing blank lines change no content
    return hashlib.sha256((canonical + "\n" + body).encode("utf-8")).hexdigest()


def _verify_checksum(metadata, body=""):
    """Refuse a version-3 file whose content does not match its checksum."""
    version = metadata.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 3:
        return  # older versions carry none; unknown ones are refused by the parser
    stored = metadata.get("checksum")
    if not isinstance(stored, str):
        raise ValueError("the checksum field is missing (version 3 files carry one)")
    if stored != _checksum(metadata, body):
        raise ValueError("checksum mismatch: the file was damaged or edited after it was "
                         "written (a release must be re-saved by dpsynth, not edited)")


def _escape_label(text, version=_VERSION):
    """CSV label of a value's text: the empty cell and the missing token (from version
    4, the other token too) stay free."""
    tokens = (_MISSING_TOKEN, _OTHER_TOKEN) if version >= 4 else (_MISSING_TOKEN,)
    if text == "" or text in tokens or text.startswith(_ESCAPE):
        return _ESCAPE + text
    return text


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _has_duplicate_rows(rows):
    """Whether a 2-D int array has two equal rows (linear when rows are sorted)."""
    if rows.shape[0] < 2:
        return False
    step = np.diff(rows, axis=0)
    if np.any(step < 0):  # not in lexicographic order: sort first
        nonzero = step != 0
        first = np.argmax(nonzero, axis=1)
        if np.any(step[np.arange(len(step)), first] < 0):
            rows = rows[np.lexsort(rows.T[::-1])]
            step = np.diff(rows, axis=0)
    return bool(np.any(np.all(step == 0, axis=1)))


def _table_shape(schema, columns, basis):
    """Shape of a dense marginal (``basis="marginal"``) or residual over ``columns``."""
    if basis == "residual":
        possible = schema.possible_cells()
        return tuple(int(possible[c].sum()) - 1 for c in columns)
    sizes = schema.n_values + (1 if schema.missing == "absent" else 0)
    return tuple(int(sizes[c]) for c in columns)


class DPAggregates:
    """Differentially private k-way aggregates, with their public schema.

    Do not build it by hand: :meth:`DPMarginalSynthesizer.fit
    <dpsynth.DPMarginalSynthesizer.fit>` creates it (``aggregates_``) and
    :meth:`load` reads a saved one.

    Parameters
    ----------
    schema : dpsynth.schema.Schema
        Public schema (declared and released values only).
    reporting_length : int
        Maximum combination length R.
    tuples : list of ndarray
        ``tuples[k-1]`` is an int32 array (m_k, k) of sorted attribute ids.
    counts : list of ndarray
        ``counts[k-1]`` is the int64 array (m_k,) of their counts.
    n_records : int
        DP record count.
    privacy : PrivacySpent
        What the release cost (``privacy_spent_`` of the fit).
    target : str or None, default=None
        Name of the column that was the estimator's ``y``, if any.
    marginals : sequence of NoisyMarginal, default=()
        Dense noisy marginals.

    Attributes
    ----------
    encoder : TableEncoder
        Fitted encoder rebuilt from the public schema (codes <-> values).
    """

    def __init__(self, schema, reporting_length, tuples, counts, n_records, privacy,
                 target=None, marginals=()):
        if not isinstance(schema, Schema):
            raise TypeError(f"schema must be a dpsynth.schema.Schema; got "
                            f"{type(schema).__name__}.")
        if not isinstance(privacy, PrivacySpent):
            raise TypeError(f"privacy must be a PrivacySpent; got {type(privacy).__name__}.")
        self.schema = schema
        self.target = target
        self.reporting_length = int(reporting_length)
        self.tuples = [np.asarray(t, dtype=np.int64) for t in tuples]
        self.counts = [np.ascontiguousarray(c, dtype=np.int64) for c in counts]
        self.n_records = int(n_records)
        self.privacy = privacy
        self.marginals = tuple(marginals)
        self._encoder = None
        self._validate()
        if target is not None and target not in self.column_names:
            raise ValueError(f"target {target!r} is not a column of the aggregates.")
        self.tuples = [np.ascontiguousarray(t, dtype=np.int32) for t in self.tuples]

    @property
    def encoder(self):
        """A fitted :class:`~dpsynth.preprocessing.TableEncoder` of the public schema."""
        if self._encoder is None:
            self._encoder = TableEncoder.from_schema(self.schema)
        return self._encoder

    # ------------------------------------------------------------ building
    @classmethod
    def from_release(cls, schema, levels, reporting_length, n_records, privacy,
                     target=None, marginals=()):
        """Build from the release's levels over a private schema, publishing only
        declared and released values (``levels[0]`` holds the released 1-tuples)."""
        keep = np.zeros(schema.n_attributes, dtype=bool)
        if levels:
            keep[levels[0].tuples[:, 0]] = True
        public, new_ids = schema.restrict(keep)
        tuples = [new_ids[level.tuples].astype(np.int32) for level in levels]
        counts = [level.counts for level in levels]
        return cls(public, reporting_length, tuples, counts, n_records, privacy, target,
                   marginals)

    # ---------------------------------------------------------- validation
    def _validate(self):
        """Check structure, ranges, closure and normalisation; raise ValueError."""
        schema = self.schema
        n_attributes = schema.n_attributes
        column_of = schema.attribute_columns
        if not 1 <= self.reporting_length:
            raise ValueError("reporting_length must be >= 1.")
        if len(self.tuples) != len(self.counts) or len(self.tuples) > self.reporting_length:
            raise ValueError("aggregates: one tuple array and one count array per length, "
                             "at most reporting_length of them.")
        if self.n_records < 0:
            raise ValueError("n_records must be >= 0.")
        for k, (tuples, counts) in enumerate(zip(self.tuples, self.counts), start=1):
            if tuples.ndim != 2 or tuples.shape[1] != k or counts.shape != (tuples.shape[0],):
                raise ValueError(f"aggregates of length {k} have a bad shape.")
            if tuples.size and (tuples.min() < 0 or tuples.max() >= n_attributes):
                raise ValueError(f"aggregates of length {k} reference unknown attributes.")
            if np.any(counts < 1):
                raise ValueError(f"aggregates of length {k} have counts < 1.")
            if _has_duplicate_rows(tuples):
                raise ValueError(f"aggregates of length {k} have duplicate combinations.")
            if k == 1 or not tuples.size:
                continue
            if np.any(np.diff(tuples, axis=1) <= 0):
                raise ValueError(f"aggregates of length {k}: attributes must be sorted.")
            if np.any(np.diff(column_of[tuples], axis=1) == 0):
                raise ValueError(f"aggregates of length {k}: two values of one column.")
            parents = sub_tuple_counts(self.tuples[k - 2], self.counts[k - 2], tuples)
            if np.any(parents < 0):
                raise ValueError(f"aggregates of length {k}: a combination is released "
                                 "but one of its sub-combinations is not (not closed).")
            if np.any(parents < counts[:, None]):
                raise ValueError(f"aggregates of length {k}: a combination has a larger "
                                 "count than one of its sub-combinations (not normalised).")
        for marginal in self.marginals:
            if not isinstance(marginal, NoisyMarginal):
                raise TypeError("marginals must be NoisyMarginal objects")
            if not marginal.columns:
                raise ValueError("marginal columns must be distinct and increasing; got ()")
            if marginal.columns[-1] >= len(schema):
                raise ValueError(f"marginal over unknown columns {marginal.columns}")
            shape = _table_shape(schema, marginal.columns, marginal.basis)
            if marginal.table.shape != shape:
                raise ValueError(f"marginal over columns {marginal.columns} has shape "
                                 f"{marginal.table.shape}; the schema gives {shape}.")

    @property
    def table_sizes(self):
        """Cells per column of a dense marginal (the empty cell of ``missing="absent"``
        included)."""
        return self.schema.n_values + (1 if self.schema.missing == "absent" else 0)

    # ------------------------------------------------------------- views
    def __len__(self):
        return int(sum(len(c) for c in self.counts))

    def __repr__(self):
        """What the release holds: its kind, columns, noisy tables or combinations
        (by length), the DP record count and the guarantee."""
        parts = [f"{len(self.schema)} columns"]
        if self.marginals or not self.counts:  # the workload release: dense noisy tables
            ways = {}
            for marginal in self.marginals:
                ways[len(marginal.columns)] = ways.get(len(marginal.columns), 0) + 1
            by_way = ", ".join(f"{k}-way: {n}" for k, n in sorted(ways.items()))
            residuals = sum(m.basis == "residual" for m in self.marginals)
            kind = f", {residuals} as residuals" if residuals else ""
            parts.append(f"n_marginals={len(self.marginals)}"
                         + (f" ({by_way}{kind})" if by_way else ""))
        if self.counts:
            by_length = ", ".join(f"{k}: {len(c)}" for k, c in enumerate(self.counts, 1))
            parts.append(f"n_combinations={len(self)} ({by_length})")
        strategy = self.privacy.get("strategy") if hasattr(self.privacy, "get") else None
        release = f"{strategy} release, " if strategy else ""
        return (f"DPAggregates({release}{', '.join(parts)}, n_records={self.n_records}, "
                f"epsilon={self.privacy.epsilon:g}, delta={self.privacy.delta:g})")

    @property
    def column_names(self):
        return self.schema.names

    def to_dict(self):
        """``{combination: count}``; a combination is a tuple of ``(column, value)``
        pairs in column order, the value in its original type (missing: None)."""
        names = self.schema.attribute_names()
        out = {}
        for tuples, counts in zip(self.tuples, self.counts):
            for row, count in zip(tuples.tolist(), counts.tolist()):
                out[tuple(names[a] for a in row)] = count
        return out

    def to_frame(self):
        """One row per combination: ``length``, ``count`` and one column per data column.

        A column that is not part of the combination is empty (None); a
        missing value that is part of it is shown as ``"<missing>"``, an
        other value as its label (see
        :meth:`~dpsynth.schema.Schema.attribute_names`).
        """
        columns = self.column_names
        position = {name: j for j, name in enumerate(columns)}
        rows = []
        for combination, count in self.to_dict().items():
            row = [None] * len(columns)
            for name, value in combination:
                row[position[name]] = _MISSING_TOKEN if value is None else value
            rows.append([len(combination), count] + row)
        frame = pd.DataFrame(rows, columns=["length", "count"] + columns)
        for name in columns:
            frame[name] = frame[name].astype(object)
        return frame

    def one_counts(self):
        """The released 1-count of every attribute id (0 where not released).

        Without sparse counts, the dense 1-way marginals give them: repeated
        measurements averaged by inverse variance, rounded, negatives at 0
        (post-processing).
        """
        counts = np.zeros(self.schema.n_attributes, dtype=np.int64)
        if self.tuples:
            counts[self.tuples[0][:, 0]] = self.counts[0]
            return counts
        offsets = self.schema.offsets
        for j in range(len(self.schema)):
            measured = [m for m in self.marginals if m.columns == (j,) and m.basis == "marginal"]
            if not measured:
                continue
            weights = [1.0 / max(m.variance, 1e-12) for m in measured]
            table = sum(w * m.table for w, m in zip(weights, measured)) / sum(weights)
            size = int(self.schema.n_values[j])  # the empty cell of "absent" left out
            counts[offsets[j]:offsets[j] + size] = np.maximum(np.rint(table[:size]), 0)
        return counts

    def check_samplable(self, *, complete):
        """Raise ``ValueError`` if records cannot be synthesized from these aggregates.

        ``complete``: every column must get a value (``missing="category"``),
        so every column needs at least one released value.
        """
        released = self.one_counts() > 0
        if not released.any():
            raise ValueError("The aggregates contain no released attribute; nothing "
                             "to sample (fit with a larger epsilon or more records).")
        if complete:
            per_column = np.bincount(self.schema.attribute_columns[released],
                                     minlength=len(self.schema))
            empty = [c.name for c, n in zip(self.schema, per_column) if n == 0]
            if empty:
                raise ValueError(
                    f"No value of column(s) {empty} survived the DP release, so complete "
                    "records cannot be synthesized; fit with a larger epsilon or more "
                    "records, declare the column's categories, or use "
                    "TableEncoder(missing='absent') to allow empty cells.")

    # ------------------------------------------------------------- files
    def _metadata(self):
        document = {
            "format": _FORMAT,
            "version": _VERSION,
            "reporting_length": self.reporting_length,
            "n_records": self.n_records,
            "privacy": self.privacy.to_dict(),
            "target": self.target,
            "schema": self.schema.to_json(),
        }
        if self.marginals:
            document["marginals"] = [
                {"columns": [self.schema[c].name for c in m.columns],
                 "variance": m.variance, "values": m.table.ravel().tolist(),
                 **({"basis": m.basis} if m.basis != "marginal" else {}),
                 **({"cell_variances": m.cell_variances.ravel().tolist()}
                    if m.cell_variances is not None else {})}
                for m in self.marginals]
        return document

    def save(self, path, *, format=None):
        """Write the aggregates to ``path`` as JSON (default) or CSV.

        Parameters
        ----------
        path : str or path-like
        format : {"json", "csv"}, default=None
            ``None`` picks from the file extension (``.csv`` -> CSV, else JSON).
        """
        path = os.fspath(path)
        if format is None:
            format = "csv" if path.lower().endswith(".csv") else "json"
        if format == "json":
            document = self._metadata()
            document["aggregates"] = [
                {"length": k, "tuples": t.tolist(), "counts": c.tolist()}
                for k, (t, c) in enumerate(zip(self.tuples, self.counts), start=1)
            ]
            document["checksum"] = _checksum(document)
            text = json.dumps(document, default=_json_default, indent=1, allow_nan=False)
        elif format == "csv":
            text = self._to_csv()
        else:
            raise ValueError(f"format must be 'json' or 'csv'; got {format!r}.")
        with atomic_write(path) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)

    def _value_labels(self, version=_VERSION):
        """Per column, the CSV label of each public value (must be unique).

        From version 3 a text that is empty, the missing token, or starts with
        a backslash is escaped by a leading backslash, so every value has a
        label distinct from the empty cell and from ``<missing>``; from
        version 4 from ``<other>`` too, the label of a column's other value.
        """
        labels = []
        for column in self.schema:
            names = [str(v.isoformat() if hasattr(v, "isoformat") else v)
                     for v in column.values]
            if version >= 3:
                names = [_escape_label(n, version) for n in names]
            tokens = ([_OTHER_TOKEN] if column.other else []) + [_MISSING_TOKEN]
            if len(set(names)) != len(names) or "" in names or set(tokens) & set(names):
                raise ValueError(
                    f"Column {column.name!r} has values whose text forms collide; "
                    "save as JSON instead.")
            labels.append(names + tokens)
        return labels

    def _to_csv(self):
        labels = self._value_labels()
        offsets = self.schema.offsets
        column_of = self.schema.attribute_columns
        buffer = io.StringIO()
        # every field quoted: a carriage return in a name or value stays inside its field
        writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
        writer.writerow(["length", "count"] + self.column_names)
        for k, (tuples, counts) in enumerate(zip(self.tuples, self.counts), start=1):
            for row, count in zip(tuples.tolist(), counts.tolist()):
                cells = [""] * len(labels)
                for a in row:
                    j = column_of[a]
                    cells[j] = labels[j][a - offsets[j]]
                writer.writerow([k, count] + cells)
        body = buffer.getvalue()
        metadata = self._metadata()
        metadata["checksum"] = _checksum(metadata, body)
        return "# " + json.dumps(metadata, default=_json_default, allow_nan=False) + "\n" + body

    @classmethod
    def load(cls, path):
        """Read aggregates saved by :meth:`save`; malformed files raise ``ValueError``."""
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"Cannot read aggregates file {path!r}: {exc}") from None
        try:
            if text.startswith("# "):
                return cls._from_csv(text)
            document = json.loads(text)
            if isinstance(document, dict):
                _verify_checksum(document)
            return cls._from_document(document)
        except ValueError as exc:  # includes json.JSONDecodeError (line and column)
            raise ValueError(f"Invalid aggregates file {path!r}: {exc}") from None
        except KeyError as exc:
            raise ValueError(f"Invalid aggregates file {path!r}: malformed content "
                             f"(the field {exc} is missing)") from None
        except (TypeError, IndexError, AttributeError, StopIteration, OverflowError,
                RecursionError, csv.Error, UnicodeError) as exc:
            raise ValueError(f"Invalid aggregates file {path!r}: malformed content "
                             f"({type(exc).__name__}: {exc})") from None

    @staticmethod
    def _parse_metadata(meta):
        """Schema and privacy of a file's metadata, checked."""
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise ValueError("not a dpsynth aggregates file")
        if meta.get("version") not in _READABLE_VERSIONS:
            raise ValueError(f"unsupported version {meta.get('version')!r}")
        for key in ("reporting_length", "n_records"):
            value = meta[key]
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{key} must be an integer; got {value!r:.40}")
            if not 0 <= value < 2**63 or (key == "reporting_length" and value < 1):
                raise ValueError(f"{key} is out of range: {value!r:.40}")
        if meta.get("target") is not None and not isinstance(meta["target"], str):
            raise ValueError("target must be a column name or null")
        try:
            schema = Schema.from_json(meta["schema"])
        except ValueError as exc:
            raise ValueError(f"schema: {exc}") from None
        try:
            privacy = PrivacySpent.from_dict(meta["privacy"])
        except ValueError as exc:
            raise ValueError(f"privacy: {exc}") from None
        return schema, privacy

    @staticmethod
    def _parse_marginals(meta, schema):
        names = schema.names
        marginals = []
        for entry in meta.get("marginals", []):
            columns = tuple(names.index(name) if name in names else -1
                            for name in entry["columns"])
            if -1 in columns:
                raise ValueError(f"marginal over unknown columns {entry['columns']!r:.80}")
            basis = entry.get("basis", "marginal")
            if basis not in ("marginal", "residual"):
                raise ValueError(f"marginal over {entry['columns']!r:.80}: unknown basis "
                                 f"{basis!r:.40}")
            shape = _table_shape(schema, columns, basis)
            values = np.asarray(entry["values"], dtype=np.float64)
            if values.size != int(np.prod(shape)):
                raise ValueError(f"marginal over {entry['columns']!r:.80} has {values.size} "
                                 f"values; its shape {shape} needs {int(np.prod(shape))}")
            cells = entry.get("cell_variances")
            if cells is not None:
                cells = np.asarray(cells, dtype=np.float64)
                if cells.size != values.size:
                    raise ValueError(f"marginal over {entry['columns']!r:.80} has "
                                     f"{cells.size} cell variances for {values.size} values")
                cells = cells.reshape(shape)
            marginals.append(NoisyMarginal(columns, values.reshape(shape), entry["variance"],
                                           basis, cell_variances=cells))
        return marginals

    @classmethod
    def _from_document(cls, document):
        schema, privacy = cls._parse_metadata(document)
        tuples, counts = [], []
        for k, level in enumerate(document["aggregates"], start=1):
            if level["length"] != k:
                raise ValueError("aggregates must be listed by length 1, 2, ...")
            t = np.asarray(level["tuples"])
            c = np.asarray(level["counts"])
            if t.size and t.dtype.kind not in "iu" or c.size and c.dtype.kind not in "iu":
                raise ValueError(f"aggregates of length {k} must hold integers")
            tuples.append(t.astype(np.int64).reshape(-1, k))
            counts.append(c.astype(np.int64))
        return cls(schema, document["reporting_length"], tuples, counts,
                   document["n_records"], privacy, document.get("target"),
                   cls._parse_marginals(document, schema))

    @classmethod
    def _from_csv(cls, text):
        header, _, body = text.partition("\n")
        try:
            meta = json.loads(header[2:])
        except ValueError as exc:
            raise ValueError(f"line 1 (metadata): {exc}") from None
        if not isinstance(meta, dict):
            raise ValueError("line 1 (metadata) is not a JSON object")
        _verify_checksum(meta, body)
        schema, privacy = cls._parse_metadata(meta)
        shell = cls(schema, meta["reporting_length"], [], [], meta["n_records"], privacy)
        labels = shell._value_labels(meta["version"])
        index = [{label: i for i, label in enumerate(col)} for col in labels]
        csv.field_size_limit(max(csv.field_size_limit(), min(len(body) + 1, sys.maxsize)))
        reader = csv.reader(io.StringIO(body, newline=""), strict=True)
        columns = next(reader, None)
        if columns != ["length", "count"] + shell.column_names:
            raise ValueError("line 2: CSV columns do not match the schema")
        by_length = {}
        for row in reader:
            line_no = reader.line_num + 1
            if not row:  # a blank line (e.g. a trailing one)
                continue
            if len(row) != len(columns):
                raise ValueError(f"line {line_no}: expected {len(columns)} cells, got "
                                 f"{len(row)}")
            try:
                k, count = int(row[0]), int(row[1])
            except ValueError:
                raise ValueError(f"line {line_no}: length and count must be integers; "
                                 f"got {row[0]!r:.40}, {row[1]!r:.40}") from None
            if not 1 <= k <= meta["reporting_length"] or not 1 <= count < 2**63:
                raise ValueError(f"line {line_no}: length {k} or count {count} out of range")
            ids = []
            for j, cell in enumerate(row[2:]):
                if cell == "":
                    continue
                if cell not in index[j]:
                    raise ValueError(f"line {line_no}: unknown value {cell!r} of column "
                                     f"{columns[j + 2]!r}")
                ids.append(int(schema.offsets[j]) + index[j][cell])
            if len(ids) != k:
                raise ValueError(f"line {line_no}: length {k} but {len(ids)} values")
            by_length.setdefault(k, ([], []))
            by_length[k][0].append(ids)
            by_length[k][1].append(count)
        if sorted(by_length) != list(range(1, len(by_length) + 1)):
            raise ValueError("combination lengths must be 1, 2, ... without gaps")
        tuples = [np.asarray(by_length[k][0], dtype=np.int64).reshape(-1, k)
                  for k in sorted(by_length)]
        counts = [np.asarray(by_length[k][1], dtype=np.int64) for k in sorted(by_length)]
        return cls(schema, meta["reporting_length"], tuples, counts, meta["n_records"],
                   privacy, meta.get("target"), cls._parse_marginals(meta, schema))
