select p.currency, exists (
       select 1 from project_figures cf
       where cf.team_id = p.team_id and cf.project_id = p.id and cf.revision = p.revision
         and cf.day = (cast(:now as timestamptz) at time zone p.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer)) as current, d.task_id, d.version, d.parts_version
     from projects p
     left join lateral (
       select t.id as task_id, l.xmin::text as version, coalesce(pf.parts_version, 0)::text as parts_version
       from tasks t
       join task_labor l on l.team_id = t.team_id and l.task_id = t.id
       left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
       where t.team_id = p.team_id and t.project_id = p.id and t.archived_at is null and t.id > cast(:after as uuid)
         and (l.members_json is null or not l.parts_version = coalesce(pf.parts_version, 0))
         and (exists (
       select 1 from project_figures cf
       where cf.team_id = p.team_id and cf.project_id = p.id and cf.revision = p.revision
         and cf.day = (cast(:now as timestamptz) at time zone p.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer))
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = p.team_id and sm.project_id = p.id and sm.task_id = t.id))
       order by t.id
       limit :limit
     ) d on true
     where p.team_id = :teamId and p.id = :projectId
