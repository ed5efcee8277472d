select p.id, p.name, p.currency, p.budget, p.time_zone, p.rate_unit, p.hours_per_day, p.created_at, p.updated_at, p.revision, p.reset_revision,
            case when (exists (
       select 1 from project_figures cf
       where cf.team_id = p.team_id and cf.project_id = p.id and cf.revision = p.revision
         and cf.day = (cast(:now as timestamptz) at time zone p.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer))
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = p.team_id and sm.project_id = p.id)
     and not exists (select 1 from stale_inputs si where si.team_id = p.team_id and si.project_id = p.id)) then
              p.revision::text || '.' || (select f.generation from project_figures f where f.team_id = p.team_id and f.project_id = p.id)::text
            end as figures_version
     from projects p where p.team_id = :teamId and p.id = :projectId
