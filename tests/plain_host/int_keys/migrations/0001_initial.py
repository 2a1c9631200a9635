# The plain host's models with integer keys (PLAIN_HOST_INTEGER_KEYS; tests.plain_host.int_settings).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Conversation',
            fields=[
                ('id', models.BigAutoField(primary_key=True, serialize=False)),
                ('title', models.CharField(blank=True, max_length=300)),
                ('cwd', models.CharField(blank=True, max_length=500)),
                ('model', models.CharField(default='plain-model', max_length=100)),
                ('status', models.CharField(default='idle', max_length=20)),
                ('archived', models.BooleanField(default=False)),
                ('woken', models.BooleanField(default=False)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.CreateModel(
            name='Line',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('seq', models.PositiveIntegerField()),
                ('role', models.CharField(max_length=20)),
                ('kind', models.CharField(default='chat', max_length=20)),
                ('content', models.TextField()),
                ('tokens', models.PositiveIntegerField(default=0)),
                ('relay_id', models.CharField(blank=True, max_length=200)),
                ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lines', to='plain_host.conversation')),
            ],
            options={
                'ordering': ['seq'],
                'constraints': [models.UniqueConstraint(fields=('conversation', 'seq'), name='plain_line_seq')],
            },
        ),
    ]
