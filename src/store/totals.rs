//! The ledger's totals (migration 4), kept on rows so `status` reads them without visiting a
//! turn, whatever the number of turns or rotations.
//!
//! Each session keeps the sums of its turns' cost and tokens; each thread keeps the counts and
//! sums of its *ended* sessions (`past_*`), so a conversation's totals are its thread's past
//! plus its live session's: two rows. They change where a turn's figures are written, by one
//! statement each: the end of a turn adds its figures to its session, a rotation adds the ended
//! session to its thread's past, and an import sums a thread afresh from its turns.
//!
//! Adding a turn's figures relies on one invariant of the store: figures are written only
//! together with a final status (`finish_turn`, or an import copying a finished turn), so a
//! turn that is `running` or `abandoned` has none yet and a final one has all it will get.
//! Recording the end of a turn twice (a retry) therefore adds nothing the second time.

use rusqlite::{Connection, OptionalExtension, params};

use super::Totals;
use crate::agent::ledger::Figures;

/// `total = total + figure`, where a NULL figure changes nothing and a NULL total (no turn
/// reported that figure yet) takes the figure: `sum`'s meaning of NULL.
macro_rules! add {
    ($total:expr, $figure:expr) => {
        concat!(
            $total,
            " = coalesce(",
            $total,
            " + ",
            $figure,
            ", ",
            $total,
            ", ",
            $figure,
            ")"
        )
    };
}

/// The four `add!`s of a row's totals (`total_*` or `past_*`), from the four figures in
/// `Figures`' order.
macro_rules! add_figures {
    ($row:literal, $cost:expr, $input:expr, $output:expr, $cached:expr) => {
        concat!(
            add!(concat!($row, "_cost_usd"), $cost),
            ", ",
            add!(concat!($row, "_input_tokens"), $input),
            ", ",
            add!(concat!($row, "_output_tokens"), $output),
            ", ",
            add!(concat!($row, "_cached_tokens"), $cached)
        )
    };
}

/// The UPDATE that adds a turn's figures to its session's totals while the session is live
/// (nearly always): see [`add_turn`].
pub(crate) const ADD_TO_LIVE_SESSION: &str = concat!(
    "UPDATE sessions SET ",
    add_figures!("total", "?2", "?3", "?4", "?5"),
    " WHERE id = (SELECT session_id FROM turns WHERE id = ?1 \
     AND status IN ('running', 'abandoned')) AND ended_at IS NULL"
);

/// Adds the figures of turn `turn_id`, about to be recorded as finished, to its session's
/// totals; nothing when the turn was finished already (its figures are counted) or does not
/// exist. Run in the transaction that records the turn's end, before it. A session ended
/// meanwhile (the turn outlived a rotation) passes them on to its thread's past.
pub(crate) fn add_turn(conn: &Connection, turn_id: i64, figures: &Figures) -> rusqlite::Result<()> {
    if *figures == Figures::default() {
        return Ok(());
    }
    let params = params![
        turn_id,
        figures.cost_usd,
        figures.input_tokens,
        figures.output_tokens,
        figures.cached_tokens
    ];
    // Nearly always the session is live: then one UPDATE without RETURNING, which costs a
    // third more (88 k instructions against 65 k). Otherwise (the turn was finished already,
    // is missing, or outlived a rotation) the UPDATE below finds out which.
    let live = conn.prepare_cached(ADD_TO_LIVE_SESSION)?.execute(params)?;
    if live == 1 {
        return Ok(());
    }
    let ended: Option<Option<i64>> = conn
        .prepare_cached(concat!(
            "UPDATE sessions SET ",
            add_figures!("total", "?2", "?3", "?4", "?5"),
            " WHERE id = (SELECT session_id FROM turns WHERE id = ?1 \
             AND status IN ('running', 'abandoned')) RETURNING ended_at"
        ))?
        .query_row(params, |row| row.get(0))
        .optional()?;
    if matches!(ended, Some(Some(_))) {
        conn.prepare_cached(concat!(
            "UPDATE threads SET ",
            add_figures!("past", "?2", "?3", "?4", "?5"),
            " WHERE id = (SELECT s.thread_id FROM turns AS t JOIN sessions AS s \
             ON s.id = t.session_id WHERE t.id = ?1)"
        ))?
        .execute(params)?;
    }
    Ok(())
}

/// Adds the ended session `session_id`'s turns and totals to its thread's past (a rotation).
pub(crate) fn end_session(conn: &Connection, session_id: i64) -> rusqlite::Result<()> {
    conn.execute(
        concat!(
            "UPDATE threads SET past_turn_count = past_turn_count + s.turn_count, ",
            add_figures!(
                "past",
                "s.total_cost_usd",
                "s.total_input_tokens",
                "s.total_output_tokens",
                "s.total_cached_tokens"
            ),
            " FROM (SELECT * FROM sessions WHERE id = ?1) AS s WHERE threads.id = s.thread_id"
        ),
        [session_id],
    )?;
    Ok(())
}

/// Sums the totals of thread `thread_id`'s sessions and the thread's past afresh from its
/// turns (after an import wrote them whole).
pub(crate) fn recount(conn: &Connection, thread_id: i64) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE sessions SET (total_cost_usd, total_input_tokens, total_output_tokens, \
         total_cached_tokens) = (SELECT sum(cost_usd), sum(input_tokens), sum(output_tokens), \
         sum(cached_tokens) FROM turns WHERE session_id = sessions.id) WHERE thread_id = ?1",
        [thread_id],
    )?;
    conn.execute(
        "UPDATE threads SET (past_turn_count, past_cost_usd, past_input_tokens, \
         past_output_tokens, past_cached_tokens) = (SELECT coalesce(sum(turn_count), 0), \
         sum(total_cost_usd), sum(total_input_tokens), sum(total_output_tokens), \
         sum(total_cached_tokens) FROM sessions WHERE thread_id = threads.id \
         AND ended_at IS NOT NULL) WHERE id = ?1",
        [thread_id],
    )?;
    Ok(())
}

/// The totals of session `session_id` (`Some`) or of thread `thread_id` (its past and its live
/// session): one or two rows either way.
pub(crate) fn read(
    conn: &Connection,
    session_id: Option<i64>,
    thread_id: i64,
) -> rusqlite::Result<Totals> {
    let (sql, key) = match session_id {
        Some(id) => (super::rows::sql::SESSION_TOTALS, id),
        None => (super::rows::sql::THREAD_TOTALS, thread_id),
    };
    let totals = conn
        .prepare_cached(sql)?
        .query_row([key], |row| {
            Ok(Totals {
                turns: row.get(0)?,
                figures: super::rows::figures(row, 1)?,
            })
        })
        .optional()?;
    Ok(totals.unwrap_or_default())
}
