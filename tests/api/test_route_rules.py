"""The rules the API's routes once held, as the plain service functions they are now (real SQLite
and Redis): who may see a bot's details, a house bot refused, disabling and rotating
(services.bots, services.revocation). The routes only turn their refusals into HTTP errors
(tests/api/test_http.py and test_revocation.py check those answers)."""

from __future__ import annotations

import pytest

from atout_arena.services.bots import BotRegistry, RegistryError, check_details_viewer, check_not_house
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.ladders import create_ladder
from atout_arena.services.practice import house_bots
from atout_arena.services.revocation import rotate_token, set_disabled

# -- services.bots ---------------------------------------------------------------------------------


def test_a_bots_details_are_the_organizers_and_its_own() -> None:
    check_details_viewer(7, organizer=True, caller_bot_id=None)
    check_details_viewer(7, organizer=False, caller_bot_id=7)
    with pytest.raises(RegistryError, match="need the organizer token or the bot's own token") as nobody:
        check_details_viewer(7, organizer=False, caller_bot_id=None)
    assert nobody.value.kind == "unauthorized"
    with pytest.raises(RegistryError, match="that bot's details only") as other:
        check_details_viewer(7, organizer=False, caller_bot_id=8)
    assert other.value.kind == "forbidden"


def test_nobody_holds_the_token_of_a_house_bot_nor_disables_it(sessions, redis_client) -> None:  # type: ignore[no-untyped-def]
    check_not_house("alice", "disable or enable")
    with pytest.raises(RegistryError) as refused:
        check_not_house("house-fool-1", "disable or enable")
    assert str(refused.value) == ("house-fool-1 is a house bot: the arena runs it, "
                                  "nobody can disable or enable it")
    assert refused.value.kind == "conflict"
    (house,) = house_bots(sessions, "fool", 1)
    registry = BotRegistry(sessions)
    with pytest.raises(RegistryError, match="nobody can hold a token of it"):
        rotate_token(sessions, redis_client, house)
    with pytest.raises(RegistryError, match="nobody can disable or enable it"):
        set_disabled(sessions, redis_client, house, True)
    with pytest.raises(RegistryError, match="nobody can disable or enable it"):
        registry.disable(house, disabled=False)
    assert registry.get(house).disabled is False


def test_disabling_revokes_the_bot_and_names_its_running_ladders(sessions, redis_client, make_bot) -> None:  # type: ignore[no-untyped-def]
    bots = [make_bot("dis")[0] for _ in range(2)]
    ladder = create_ladder(sessions, name=f"dis-{bots[0].id}", spec=CompetitionSpec.of("fool", 2),
                           bots=[b.name for b in bots])
    done = set_disabled(sessions, redis_client, bots[0].id, True)
    assert done.bot.id == bots[0].id and done.bot.disabled is True
    assert done.ladders == [ladder]  # for the caller to tick at once
    enabled = set_disabled(sessions, redis_client, bots[0].id, False)
    assert enabled.bot.disabled is False and enabled.ladders == []  # enabling ticks nothing


def test_a_rotated_token_replaces_the_old_one(sessions, redis_client, make_bot) -> None:  # type: ignore[no-untyped-def]
    bot, old = make_bot("rot")
    registry = BotRegistry(sessions)
    new = rotate_token(sessions, redis_client, bot.id)
    assert new != old and registry.verify(old) is None and registry.verify(new).id == bot.id  # type: ignore[union-attr]
