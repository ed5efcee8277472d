with recursive scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and id = :taskId and archived_at is null
        union
        select t.id from tasks t join scope s on t.team_id = :teamId and t.parent_task_id = s.id
        where t.archived_at is null),
     assigned (task_id, team_member_id) as (
       select a.task_id, a.team_member_id from task_assignees a join scope s on a.team_id = :teamId and a.task_id = s.id
     ),
     logged (task_id, team_member_id) as (
       select x.task_id, x.team_member_id from task_member_time x join scope s on x.team_id = :teamId and x.task_id = s.id
       where x.total_seconds > 0
     ),
     participant (task_id, team_member_id, is_assignee, has_logged_time) as (
       select coalesce(a.task_id, l.task_id), coalesce(a.team_member_id, l.team_member_id), a.task_id is not null, l.task_id is not null
       from assigned a full join logged l on l.task_id = a.task_id and l.team_member_id = a.team_member_id
     ),
     project_today (day) as (
       select (cast(:now as timestamptz) at time zone p.time_zone)::date from projects p where p.team_id = :teamId and p.id = :projectId
     ),
     role_period (team_member_id, job_role_id, starts, ends) as (
       select team_member_id, job_role_id,
              case when row_number() over member_entries = 1 then '-infinity'::date else effective_from end,
              coalesce(lead(effective_from) over member_entries, 'infinity'::date)
       from project_member_roles where team_id = :teamId and project_id = :projectId
       window member_entries as (partition by team_member_id order by effective_from)
     ),
     rate_period (job_role_id, hourly_rate, bill_rate, starts, ends) as (
       select job_role_id, hourly_rate, bill_rate, effective_from,
              coalesce(lead(effective_from) over (partition by job_role_id order by effective_from), 'infinity'::date)
       from project_rate_cards where team_id = :teamId and project_id = :projectId
     ),
     member_rate_period (team_member_id, hourly_rate, bill_rate, starts, ends) as (
       select team_member_id, hourly_rate, bill_rate, effective_from,
              coalesce(lead(effective_from) over (partition by team_member_id order by effective_from), 'infinity'::date)
       from project_member_rates where team_id = :teamId and project_id = :projectId
     ),
     line as (
       select d.task_id, d.team_member_id, role.job_role_id,
              trim_scale(coalesce(coalesce(own.hourly_rate, rate.hourly_rate), 0)) as hourly_rate,
              trim_scale(coalesce(coalesce(own.bill_rate, rate.bill_rate), 0)) as bill_rate,
              bool_or(coalesce(own.hourly_rate, rate.hourly_rate) is null) as cost_missing, bool_or(coalesce(own.bill_rate, rate.bill_rate) is null) as bill_missing,
              min(d.day) as first_day, max(d.day) as last_day, sum(d.total_seconds) as seconds
       from task_member_day_time d
       join scope s on d.team_id = :teamId and d.task_id = s.id
       left join role_period role on role.team_member_id = d.team_member_id and d.day >= role.starts and d.day < role.ends
       left join rate_period rate on rate.job_role_id = role.job_role_id and d.day >= rate.starts and d.day < rate.ends
       left join member_rate_period own on own.team_member_id = d.team_member_id and d.day >= own.starts and d.day < own.ends
       where d.total_seconds > 0 and (cast(:from as date) is null or d.day >= cast(:from as date)) and (cast(:to as date) is null or d.day <= cast(:to as date))
       group by d.task_id, d.team_member_id, role.job_role_id,
                trim_scale(coalesce(coalesce(own.hourly_rate, rate.hourly_rate), 0)), trim_scale(coalesce(coalesce(own.bill_rate, rate.bill_rate), 0)))
     select 0 as kind, p.task_id, p.team_member_id, p.is_assignee as a, p.has_logged_time as b,
            null::text as name, null::text as avatar_url, null::text as job_role, null::text as hourly_rate, null::text as bill_rate,
            null::text as cost_source, null::text as bill_source, null::bigint as seconds, null::text as first_day, null::text as last_day
     from participant p
     union all
     select 1, null, m.id, null, null, m.name, m.avatar_url, jr.name, coalesce(own.hourly_rate, rate.hourly_rate)::text as hourly_rate, coalesce(own.bill_rate, rate.bill_rate)::text as bill_rate,
            case when own.hourly_rate is not null then 'member' when rate.hourly_rate is not null then 'role' else 'none' end as cost_source, case when own.bill_rate is not null then 'member' when rate.bill_rate is not null then 'role' else 'none' end as bill_source, null, null, null
     from team_members m
     cross join project_today pt
     left join role_period role on role.team_member_id = m.id and pt.day >= role.starts and pt.day < role.ends
     left join job_roles jr on jr.team_id = :teamId and jr.id = role.job_role_id
     left join rate_period rate on rate.job_role_id = role.job_role_id and pt.day >= rate.starts and pt.day < rate.ends
     left join member_rate_period own on own.team_member_id = m.id and pt.day >= own.starts and pt.day < own.ends
     where m.team_id = :teamId and m.id in (select team_member_id from participant)
     union all
     select 2, l.task_id, l.team_member_id, l.cost_missing, l.bill_missing, null, null, jr.name, l.hourly_rate::text, l.bill_rate::text,
            null, null, l.seconds, l.first_day::text, l.last_day::text
     from line l left join job_roles jr on jr.team_id = :teamId and jr.id = l.job_role_id
