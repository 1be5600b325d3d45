"""The words that tell organisations apart, and the ones that do not.

The ``about`` verdict weighs the words a page shares with the subject's own pages, or with a
namesake's. Most words of a page are English, not evidence: company prose ("founded",
"revenue") is ``GENERIC``; everyday words ("data", "control", "team", "messages") are
``COMMON_WORDS`` — a page on air traffic control and one on a messaging system both say
"messages". Both lists were written by hand for sourcedesk. ``stem`` folds plurals only.
"""

from __future__ import annotations

from sourcedesk.core.text.phrases import word_list, words

# Words that say nothing about *which* organisation a page means.
GENERIC = frozenset(
    word_list(
        """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our ours out over own same she should so some such than that the their them then there
    these they this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours one two three new based company companies firm firms business
    businesses group holding holdings inc incorporated ltd limited llc plc corp corporation co gmbh ag sa sas
    bv nv pty technologies technology tech solution solutions service services system systems product products
    platform platforms software provider providers maker makers team official site home homepage page news
    blog about welcome formerly known open source free first leading world global international largest main
    best help helps used use uses using make makes made year years today people customers customer work works
    way ways including include includes founded found founder founders raise raised raises funding funded fund
    million billion usd eur gbp series round investor investors backed ceo chief executive headquarters
    headquartered employees staff revenue said says announced announces launch launches launched report
    reports reported according
        """
    )
)
# Trailing words of a company name that a page often leaves out ("Kestra Medical Technologies, Ltd.").
LEGAL_SUFFIXES = frozenset(
    word_list(
        """
    inc incorporated ltd limited llc plc corp corporation co gmbh ag sa sas bv nv pty holdings group
        """
    )
)
# Everyday English: verbs, nouns and adjectives any page about any organisation may use.
COMMON_WORDS = frozenset(
    word_list(
        """
    able above access account accounts across act action actions active activity actually add added adding adds
    address advance advantage age ago agree ahead aim air allow allowed allows almost alone along already although
    always among amount analysis announce answer anyone anything anywhere app apps apply approach area areas
    around arrive article articles ask asked asks available average away back bad balance bank base basic became
    become becomes began begin behind believe below benefit better beyond big bigger biggest bill bit black block
    blocks board body book books bottom box bring brings broad build building builds built buy buys call called
    calls came can't capacity car card cards care career case cases cash cause center central centre centres
    certain chain chance change changed changes changing charge cheap check choice choose city claim class clear
    clearly close closed closer code come comes coming common community compare compared complete complex concern
    connect connected connection consider contact content context continue continues contract control controls
    core cost costs could count country course cover create created creates creating cross current currently cut
    cuts daily data date day days deal deals decide decision deep define deliver delivered demand department design
    designed detail details develop developed developing development device devices different difficult digital
    direct directly done door double down draft drive driven drop due early ease easier easy edge effect effort
    either else email empty end ended ends energy enough ensure enter entire entry environment equal error even
    event events ever every everyone everything exactly example examples expect expected experience explain extra
    face fact fail failed fall falls family far fast faster feature features feel fell few field figure file files
    fill final finally find finds fine finish fire first fit five fix fixed flat flexible floor focus follow
    following form format forward four free friend front full fully function future gain game gap general get gets
    getting give given gives giving go goal goes going gone good got great green grew ground group groups grow
    growing grown growth guide half hand handle handles hard head health hear heart held hello high higher highest
    hit hold holds home hope hour hours house however huge human idea ideas image impact important improve include
    increase independent individual industry information inside instead interest internal into issue issues item
    items job jobs join joined just keep keeps key kind know known lack land large larger largest last late later
    latest launch lead leader leaders leading learn least leave led left less let letter level levels life light
    like likely limit limited line lines link list little live load local locally long look looking looks lose
    loss lost lot low lower made main major make makes making manage managed management manager managers many
    market markets matter may mean means measure meet meeting member members message messages method middle might
    mind minute minutes miss mobile mode model models modern moment money month months more morning most move moved
    moves much must name named names near nearly need needed needs network networks never next night none normal
    note nothing notice number numbers offer offered offering offers office often old once online only open opened
    option options order orders original others otherwise outside overall owner page pages paid part partner
    partners parts party pass past pay people per percent perhaps period person personal pick piece place places
    plan planned plans play point points policy poor popular position possible post power practice present press
    pressure price prices private problem problems process processes produce program programme progress project
    projects proper provide provided provides public pull purpose push put quality quarter question questions quick
    quickly quite rate rates rather reach read ready real really reason reasons receive received recent recently
    record records reduce region regular release released remain remains remote remove replace request requests
    require required requires research response rest result results return review reviews right rise rising risk
    risks road role room rule rules run running runs safe safety sale sales same save saw say scale school search
    second section security see seen sell send sense series serve served set sets setting settings several shape
    share shared shares short show shown shows side sign signed simple simply since single site sites size skill
    small smaller social software sold solution some someone something sometimes soon sort sound space special
    speed spend spending spent staff stage stand standard start started starting starts state statement step steps
    still stop store stories story strong structure student study style subject success successful such suit
    summary support supported supports sure system table take taken takes taking talk target task tasks teams tell
    term terms test tests text thing things think third though thought thousand thousands three through time
    times title top total toward towards track trade traffic training true try turn turned type types under
    understand unit until upon user users usual value values version view visit want wanted wants watch water week
    weeks well went whether white whole wide win within without word words worked worker workers working world
    worth write written wrong yes yet young
        """
    )
)
# Words as common as those that GENERIC leaves out.
MORE_GENERIC = frozenset(word_list("every many much more less other another across within without via per ai"))


def is_evidence(word: str, word_stem: str | None = None) -> bool:
    """Whether a word may tell one organisation from another (not everyday English)."""
    if word in GENERIC or word in COMMON_WORDS or word in MORE_GENERIC or len(word) < 2 or word.isdigit():
        return False
    return word_stem is None or word_stem not in COMMON_WORDS


def stem(word: str) -> str:
    """Plural to singular and nothing more: "messages" and "message" meet, "messaging" stays
    apart (a flight-plan message is no messaging system; a stronger stemmer said it was)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def written_terms(text: str) -> dict[str, str]:
    """The words of what an analyst wrote to tell a namesake apart (a note: "UK air traffic
    control"): every word but company prose, everyday ones included — they were chosen."""
    out: dict[str, str] = {}
    for w in words(text):
        if w in GENERIC or len(w) < 2 or w.isdigit():
            continue
        out.setdefault(stem(w), w)
    return out


def distinguishing_terms(text: str) -> dict[str, str]:
    """The words of ``text`` that may tell organisations apart: stem → the word as first seen."""
    out: dict[str, str] = {}
    for w in words(text):
        word_stem = stem(w)
        if word_stem not in out and is_evidence(w, word_stem):
            out[word_stem] = w
    return out


def name_variants(full: str, subject_phrase: str) -> list[str]:
    """The ways a page names a namesake: its full name, without a legal suffix, and — when it
    contains the subject's name — that name with the namesake's next word ("kestra medical")."""
    variants = [full]
    parts = full.split()
    while len(parts) > 1 and parts[-1] in LEGAL_SUFFIXES:
        parts = parts[:-1]
        variants.append(" ".join(parts))
    name = subject_phrase.split()
    for i in range(len(parts) - len(name) + 1):
        if parts[i : i + len(name)] != name:
            continue
        after = [w for w in parts[i + len(name) :] if w not in GENERIC]
        before = [w for w in parts[:i] if w not in GENERIC]
        if before:
            variants.append(" ".join([before[-1], *name]))
        elif after:
            variants.append(" ".join([*name, after[0]]))
        break
    return sorted(dict.fromkeys(variants), key=lambda v: (-len(v.split()), v))


__all__ = [
    "COMMON_WORDS",
    "GENERIC",
    "LEGAL_SUFFIXES",
    "MORE_GENERIC",
    "distinguishing_terms",
    "is_evidence",
    "stem",
    "written_terms",
]
