"""Pygments' regex lexers with each state's rules tried in one regex call, not one each.

A `RegexLexer` finds each token by trying its state's rules in order, one
`pattern.match` call from Python per rule until one matches: Python's lexer makes some
forty calls a token, and lexing was a quarter of what drawing a code-heavy answer cost
(38 KB of Python: 90 ms). Here each state's patterns are joined into one alternation,
`(p0)|(p1)|...`, which the regex engine tries in the same order and which matches where
the first matching rule does, so one call finds the rule (the outermost group that
matched, `lastindex`). A rule whose action needs its own match object (`bygroups`,
`using`) is matched once more alone, at the same place, to number its groups as the
action expects. Everything else (actions, state changes, the error and end-of-line
handling) is RegexLexer's own loop, unchanged.

A state whose patterns cannot be joined keeps RegexLexer's way: patterns with different
flags, with numbered or named back-references (numbers shift once joined) or conditional
groups, or that do not compile together (a global inline flag, a group name used twice).

Touches: a `RegexLexer`'s processed rules (`_tokens`, private) and its tokenizing loop,
re-implemented here. `check()` compares that loop's source with the one this was written
from (a digest) and the rules' shape; refused, fences use pygments' lexers as they are.
tests/test_combined_regex_lexer.py holds the tokens equal for every plain regex lexer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Error, Whitespace, _TokenType

# The digest of `RegexLexer.get_tokens_unprocessed`'s source this loop follows.
LOOP_WRITTEN_FROM = "dda6229f98c72106"


def check() -> str | None:
    import hashlib
    import inspect

    loop = RegexLexer.get_tokens_unprocessed
    parameters = inspect.signature(loop).parameters
    if tuple(parameters) != ("self", "text", "stack") or parameters["stack"].default != ("root",):
        return f"RegexLexer.get_tokens_unprocessed{inspect.signature(loop)}"
    digest = hashlib.sha256(inspect.getsource(loop).encode()).hexdigest()[:16]
    if digest != LOOP_WRITTEN_FROM:
        return f"RegexLexer's tokenizing loop changed (source {digest}, not {LOOP_WRITTEN_FROM})"
    from pygments.lexers.shell import BashLexer

    rules = getattr(type(BashLexer()), "_tokens", {}).get("root")
    if not rules or any(len(rule) != 3 or not callable(rule[0]) for rule in rules):
        return "a processed RegexLexer rule is not (match, action, new state)"
    return None


# (match, action, new state), as RegexLexerMeta processes a rule.
Rule = tuple[Callable[[str, int], re.Match[str] | None], Any, Any]
# Back-references and conditionals refer to groups by a number or name that joining moves.
_REFERS_TO_GROUPS = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")
# Leading flags made local to their pattern. Others are left global and such a state
# unjoined: a, L and u cannot be scoped, and a verbose pattern's comments and whitespace
# did not survive joining for some lexers (Maxima's came out different).
_GLOBAL_FLAGS = re.compile(r"\(\?([ims]+)\)")
_FLAG_BITS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


class CombinedState:
    """One state's rules as one alternation, and which rule each outer group stands for."""

    __slots__ = ("match", "rules")

    def __init__(self, match: Callable[[str, int], re.Match[str] | None], rules: dict[int, Rule]):
        self.match = match
        self.rules = rules


def combine(rules: list[Rule]) -> CombinedState | None:
    """The rules joined into one pattern, or None if they cannot be."""
    sources: list[str] = []
    flags: set[int] = set()
    by_group: dict[int, Rule] = {}
    group = 0
    for rule in rules:
        pattern = getattr(rule[0], "__self__", None)
        if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
            return None
        if _REFERS_TO_GROUPS.search(pattern.pattern):
            return None
        source, own_flags = _scoped(pattern.pattern)
        flags.add(pattern.flags & ~own_flags)
        # Verbose patterns may end in a comment, which would swallow what follows.
        end = "\n" if pattern.flags & re.VERBOSE else ""
        # The empty group closes last, so `lastindex` names the rule; it goes after the
        # pattern so that the engine still sees each alternative's first character.
        sources.append(f"(?:{source}{end})()")
        group += pattern.groups + 1
        by_group[group] = rule
    if len(flags) != 1:
        return None
    try:
        combined = re.compile("|".join(sources), flags.pop())
    except (re.error, OverflowError, RecursionError):
        return None
    return CombinedState(combined.match, by_group)


def _scoped(source: str) -> tuple[str, int]:
    """A pattern's leading global flags (pygments writes `(?i)...`) made local to it, which
    is all they can be inside an alternation; and the flags that were."""
    found = _GLOBAL_FLAGS.match(source)
    if found is None:
        return source, 0
    letters = found.group(1)
    own = 0
    for letter in letters:
        own |= _FLAG_BITS[letter]
    return f"(?{letters}:{source[found.end() :]})", own


class _Combined:
    """The combined states of one lexer class, built on first use of each state."""

    def __init__(self, tokendefs: dict[str, list[Rule]]) -> None:
        self._tokendefs = tokendefs
        self._states: dict[str, CombinedState | None] = {}

    def state(self, name: str) -> CombinedState | None:
        try:
            return self._states[name]
        except KeyError:
            combined = self._states[name] = combine(self._tokendefs[name])
            return combined


_BY_CLASS: dict[type[Lexer], _Combined] = {}


def combined_lexer(lexer: Lexer) -> Lexer:
    """`lexer` with its rules tried in one regex call a token, when it is a plain
    `RegexLexer` (one that keeps RegexLexer's tokenizing loop); otherwise `lexer`."""
    cls = type(lexer)
    if (
        not isinstance(lexer, RegexLexer)
        or cls.get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed
        # Rules of the class, not chosen per instance (C#'s depend on an option).
        or "_tokens" not in cls.__dict__
        or "_tokens" in lexer.__dict__
    ):
        return lexer
    fast_cls = _fast_class(cls)
    # An instance without running __init__ again (no lexer has a __new__ of its own).
    fast: Lexer = object.__new__(fast_cls)
    fast.__dict__.update(lexer.__dict__)
    return fast


_FAST_CLASSES: dict[type[Lexer], type[Lexer]] = {}


def _fast_class(cls: type[RegexLexer]) -> type[Lexer]:
    fast = _FAST_CLASSES.get(cls)
    if fast is None:
        # `_tokens` in the new class's own namespace: the metaclass would otherwise process
        # every rule again for it.
        namespace = {
            "_tokens": cls._tokens,
            "get_tokens_unprocessed": _get_tokens_unprocessed,
            "__doc__": cls.__doc__,
        }
        meta: type[type] = type(cls)  # RegexLexerMeta, or a lexer's own metaclass
        fast = _FAST_CLASSES[cls] = meta(cls.__name__, (cls,), namespace)
        _BY_CLASS[fast] = _Combined(cls._tokens)
    return fast


def _get_tokens_unprocessed(
    self: RegexLexer, text: str, stack: tuple[str, ...] = ("root",)
) -> Iterator[tuple[int, _TokenType, str]]:
    """RegexLexer.get_tokens_unprocessed, finding the rule with one call where it can."""
    pos = 0
    tokendefs = self._tokens
    combined = _BY_CLASS[type(self)]
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    state = combined.state(statestack[-1])
    while True:
        rule: Rule | None = None
        m: re.Match[str] | None = None
        joined = False
        if state is not None:
            m = state.match(text, pos)
            if m is not None:
                rule = state.rules[m.lastindex or 0]
                joined = True
        else:
            for candidate in statetokens:
                m = candidate[0](text, pos)
                if m:
                    rule = candidate
                    break
        if rule is not None and m is not None:
            rexmatch, action, new_state = rule
            if action is not None:
                if type(action) is _TokenType:
                    # The joined match spans exactly what the rule's own would.
                    yield pos, action, m.group()
                else:
                    yield from action(self, rexmatch(text, pos) if joined else m)
            pos = m.end()
            if new_state is not None:
                if isinstance(new_state, tuple):
                    for name in new_state:
                        if name == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif name == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(name)
                elif isinstance(new_state, int):
                    # Pop, but keep at least one state on the stack.
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                else:
                    raise AssertionError(f"wrong state def: {new_state!r}")
                statetokens = tokendefs[statestack[-1]]
                state = combined.state(statestack[-1])
            continue
        # No rule matched: RegexLexer's own way on, an error character or a new line.
        if pos >= len(text):
            break
        if text[pos] == "\n":
            statestack = ["root"]
            statetokens = tokendefs["root"]
            state = combined.state("root")
            yield pos, Whitespace, "\n"
            pos += 1
            continue
        yield pos, Error, text[pos]
        pos += 1
