select k.key::text as key, t.id, t.name, t.project_id, t.billable, t.finance_version, p.currency, (exists (
       select 1 from project_figures cf
       where cf.team_id = p.team_id and cf.project_id = p.id and cf.revision = p.revision
         and cf.day = (cast(:now as timestamptz) at time zone p.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer))
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = p.team_id and sm.project_id = p.id and sm.task_id = t.id)) as current,
            trim_scale(t.estimated_hours) as estimated_hours,
            trim_scale(coalesce(l.logged_hours, 0)) as logged_hours,
            trim_scale(coalesce(l.estimated_labor_cost, 0)) as estimated_labor_cost,
            trim_scale(coalesce(l.actual_labor_cost, 0)) as actual_labor_cost,
            trim_scale(t.fixed_cost) as fixed_cost,
            trim_scale(coalesce(l.total_estimated_cost, 0)) as total_estimated_cost,
            trim_scale(coalesce(l.total_actual_cost, 0)) as total_actual_cost,
            trim_scale(coalesce(l.estimated_revenue, 0)) as estimated_revenue,
            trim_scale(coalesce(l.actual_revenue, 0)) as actual_revenue,
            trim_scale(coalesce(l.estimated_margin, 0)) as estimated_margin,
            trim_scale(coalesce(l.actual_margin, 0)) as actual_margin,
            trim_scale(coalesce(l.has_missing_rates, 0)) as has_missing_rates,
            case when l.parts_version = coalesce(pf.parts_version, 0) and not v.known then l.members_json end as members_json,
            case when l.parts_version = coalesce(pf.parts_version, 0) and not v.known then l.grouped_members_json end as grouped_members_json,
            case when l.parts_version = coalesce(pf.parts_version, 0) and not v.known then l.warnings_json end as warnings_json,
            l.xmin::text as labor_version, coalesce(pf.parts_version, 0)::text as parts_version, v.answer_version, v.known
     from unnest(string_to_array(:teamIds, ',')::uuid[], string_to_array(:taskIds, ',')::uuid[], string_to_array(:known, ',')) with ordinality as k (team_id, task_id, known, key)
     join tasks t on t.team_id = k.team_id and t.id = k.task_id and t.archived_at is null
     join projects p on p.team_id = t.team_id and p.id = t.project_id
     left join task_labor l on l.team_id = t.team_id and l.task_id = t.id
     left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
     cross join lateral (select t.xmin::text || '.' || coalesce(l.xmin::text, '-') || '.' || coalesce(pf.parts_version, 0)::text || '.' || p.currency as answer_version) a
     cross join lateral (select a.answer_version, coalesce(a.answer_version = k.known and l.parts_version = coalesce(pf.parts_version, 0), false) as known) v
